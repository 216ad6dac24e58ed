//! The hash of an operator's (domain, name), shared by the build script, which lays out the
//! operator index with it, and [`super::tables::find`], which probes that index.

/// FNV-1a over the domain, a separator no name contains, and the name.
pub fn op_hash(domain: &str, name: &str) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in domain.as_bytes().iter().chain(&[0xff]).chain(name.as_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
    }
    hash
}
