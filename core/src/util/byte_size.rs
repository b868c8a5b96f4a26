//! The one grammar for byte sizes, shared by command-line flags (`--memory-limit`) and
//! the tuning file (the `[wgpu]` table's `memory` key): `512MiB`, `1.5GiB`, `8G`, bytes.

use crate::{Error, Result};

/// Parses a byte size: a plain number of bytes, or a number (fractions allowed) with a
/// unit: `B`, binary `K`/`KiB`, `M`/`MiB`, `G`/`GiB`, `T`/`TiB`, or decimal `KB` `MB`
/// `GB` `TB` (case-insensitive, optional space). Zero and sizes beyond `u64` are errors.
pub fn parse_byte_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = |why: &str| {
        Error::InvalidInput(format!(
            "`{text}` is not a byte size ({why}; expected e.g. 512MiB, 1.5GiB, 8G or bytes)"
        ))
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number = number.replace('_', "");
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => return Err(bad(&format!("unknown unit `{other}`"))),
    };
    if number.is_empty() || number.matches('.').count() > 1 {
        return Err(bad("not a number"));
    }
    let bytes = match number.split_once('.') {
        None => number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(|| bad("too large"))?,
        Some(_) => {
            let value: f64 = number.parse().map_err(|_| bad("not a number"))?;
            let bytes = (value * scale as f64).floor();
            if bytes >= u64::MAX as f64 {
                return Err(bad("too large"));
            }
            bytes as u64
        }
    };
    if bytes == 0 {
        return Err(bad("it must be more than zero bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_environment_share_one_grammar() {
        assert_eq!(parse_byte_size("512MiB").ok(), Some(512 << 20));
        assert_eq!(parse_byte_size("16GiB").ok(), Some(16 << 30));
        assert_eq!(parse_byte_size("8GiB").ok(), Some(8 << 30));
        assert_eq!(parse_byte_size("8G").ok(), Some(8 << 30));
        assert_eq!(parse_byte_size("512m").ok(), Some(512 << 20));
        assert_eq!(parse_byte_size("1.5GiB").ok(), Some(3 << 29));
        assert_eq!(parse_byte_size("1.5 gib").ok(), Some(3 << 29));
        assert_eq!(parse_byte_size("4096").ok(), Some(4096));
        assert_eq!(parse_byte_size("4096B").ok(), Some(4096));
        assert_eq!(parse_byte_size("2GB").ok(), Some(2_000_000_000));
        assert_eq!(parse_byte_size("64k").ok(), Some(64 << 10));
        for bad in [
            "",
            "abc",
            "x",
            "12XB",
            "1.2.3GiB",
            "0",
            "0MiB",
            "-5MiB",
            "GiB",
            "99999999999TiB",
            "1e9",
        ] {
            assert!(parse_byte_size(bad).is_err(), "{bad} should not parse");
        }
        let e = parse_byte_size("12XB").unwrap_err().to_string();
        assert!(e.contains("unknown unit `xb`"), "{e}");
    }
}
