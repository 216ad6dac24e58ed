//! Where an operator's (domain, name) goes in the operator index: the build script lays the
//! index out with [`probe`], and [`super::tables::find`] looks operators up with it, so the two
//! cannot disagree.

/// FNV-1a over the domain, a separator no name contains, and the name.
pub fn op_hash(domain: &str, name: &str) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in domain.as_bytes().iter().chain(&[0xff]).chain(name.as_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    hash
}

/// The slots of an index of `slots` slots (a power of two) that the operator may occupy, in the
/// order they are tried: its hash's slot, then each next one, wrapping around once.
pub fn probe(domain: &str, name: &str, slots: usize) -> impl Iterator<Item = usize> {
    let mask = slots.saturating_sub(1);
    #[allow(clippy::cast_possible_truncation, reason = "masked to the index's size")]
    let start = op_hash(domain, name) as usize & mask;
    (0..slots).map(move |k| (start + k) & mask)
}
