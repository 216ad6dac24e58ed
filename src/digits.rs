//! A number's decimal digits, written without the formatting machinery: lowering numbers nearly
//! every temporary value, and the wire writer formats every node's source location.

/// The decimal digits of `n`, as `Display` writes them: `digits[start..]` of the pair returned.
pub fn decimal(n: u64) -> ([u8; 20], usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = n;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    (digits, start)
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn digits_are_those_display_writes() {
        for n in [0, 7, 9, 10, 99, 100, 4096, 1_000_003, u64::from(u32::MAX), u64::MAX] {
            let (digits, start) = decimal(n);
            assert_eq!(&digits[start..], n.to_string().as_bytes());
        }
    }
}
