//! Parsers for device lists (`all`, `0,2`), sizes (`2^20`, `1048576`), size lists and ranges (`2^10..2^20`,
//! `1024,4096`) and memory amounts (`512MiB`, `1.5GiB`, plain bytes; the grammar is
//! core's, shared with environment variables).

/// Which devices of the backend a command uses (`--devices`).
#[derive(Clone, Debug)]
pub enum Devices {
    /// Every available device.
    All,
    /// These indices.
    Some(Vec<usize>),
}

/// Devices for `--devices`: `all` or a comma list of indices.
pub fn devices(text: &str) -> Result<Devices, String> {
    if text == "all" {
        return Ok(Devices::All);
    }
    let list = text
        .split(',')
        .map(|t| {
            t.trim().parse::<usize>().map_err(|_| {
                format!("`{t}` is not a device index (expected `all` or a list such as `0,2`)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Devices::Some(list))
}

/// A size: a decimal integer or `2^k`.
pub fn size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let bad = |why: &str| format!("`{text}` is not a size ({why}; expected e.g. 1048576 or 2^20)");
    if let Some((base, exp)) = t.split_once('^') {
        if base.trim() != "2" {
            return Err(bad("only powers of two can be written with ^"));
        }
        let exp: u32 = exp.trim().parse().map_err(|_| bad("bad exponent"))?;
        return 1usize
            .checked_shl(exp)
            .filter(|_| exp < usize::BITS)
            .ok_or_else(|| bad(&format!("2^{exp} does not fit in {} bits", usize::BITS)));
    }
    let digits = t.replace('_', "");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not a non-negative integer"));
    }
    digits.parse().map_err(|_| bad("too large"))
}

/// Sizes to benchmark: `A..B` (from A, doubling, up to and including B), a comma
/// list (`1024,4096,2^16`), or a single size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

/// Parses a [`SizeList`].
pub fn size_list(text: &str) -> Result<SizeList, String> {
    let t = text.trim();
    if let Some((from, to)) = t.split_once("..") {
        let (from, to) = (size(from)?, size(to)?);
        if from == 0 {
            return Err(format!(
                "range `{text}` starts at 0; sizes double from a start of at least 1"
            ));
        }
        if from > to {
            return Err(format!(
                "range `{text}` is empty: {from} is larger than {to}"
            ));
        }
        let mut sizes = Vec::new();
        let mut s = from;
        while s <= to {
            sizes.push(s);
            match s.checked_mul(2) {
                Some(next) => s = next,
                None => break,
            }
        }
        return Ok(SizeList(sizes));
    }
    if t.is_empty() {
        return Err("empty size list (expected e.g. 2^10..2^20 or 1024,4096)".into());
    }
    t.split(',')
        .map(size)
        .collect::<Result<_, _>>()
        .map(SizeList)
}

/// Bytes, in the grammar every flag and environment variable shares
/// ([`crucible_core::parse_byte_size`]): `512MiB`, `1.5GiB`, `8G`, plain bytes.
pub fn memory(text: &str) -> Result<u64, String> {
    crucible_core::parse_byte_size(text).map_err(|e| match e {
        crucible_core::Error::InvalidInput(message) => message,
        other => other.to_string(),
    })
}

/// A duration: a number with a unit, `ms`, `s`, `m` or `h` (`250ms`, `30s`, `1.5m`).
pub fn duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let bad =
        |why: &str| format!("`{text}` is not a duration ({why}; expected e.g. 250ms, 30s or 2m)");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| bad("no unit"))?;
    let (number, unit) = t.split_at(split);
    let seconds_per_unit = match unit.trim() {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => return Err(bad(&format!("unknown unit `{other}`"))),
    };
    let value: f64 = number.parse().map_err(|_| bad("not a number"))?;
    std::time::Duration::try_from_secs_f64(value * seconds_per_unit)
        .map_err(|_| bad("out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size("2^20"), Ok(1 << 20));
        assert_eq!(size("2 ^ 3"), Ok(8));
        assert_eq!(size("1048576"), Ok(1 << 20));
        assert_eq!(size("1_024"), Ok(1024));
        assert_eq!(size("0"), Ok(0));
        for bad in [
            "abc",
            "",
            "-1",
            "3^4",
            "2^x",
            "2^64",
            "2^",
            "1.5",
            "99999999999999999999999",
        ] {
            assert!(size(bad).is_err(), "{bad} should not parse");
        }
        assert!(size("abc").unwrap_err().contains("`abc` is not a size"));
    }

    #[test]
    fn size_lists_and_ranges() {
        assert_eq!(
            size_list("2^10..2^13"),
            Ok(SizeList(vec![1024, 2048, 4096, 8192]))
        );
        assert_eq!(size_list("1024,4096"), Ok(SizeList(vec![1024, 4096])));
        assert_eq!(size_list("2^4"), Ok(SizeList(vec![16])));
        assert_eq!(size_list("3..13"), Ok(SizeList(vec![3, 6, 12])));
        assert_eq!(size_list("8..8"), Ok(SizeList(vec![8])));
        assert!(size_list("2^20..2^10").unwrap_err().contains("empty"));
        assert!(size_list("").unwrap_err().contains("empty"));
        assert!(size_list("0..8").is_err());
        assert!(size_list("2^10..").is_err());
        assert!(size_list("1024,,4096").is_err());
        assert!(size_list("2^10..2^x").is_err());
        let top = size_list(&format!("2^62..{}", usize::MAX)).map(|l| l.0.len());
        assert_eq!(top, Ok(2));
    }

    #[test]
    fn memory_uses_the_shared_byte_grammar() {
        assert_eq!(memory("8GiB"), Ok(8 << 30));
        assert_eq!(memory("8G"), Ok(8 << 30));
        let e = memory("12XB").unwrap_err();
        assert!(e.starts_with("`12XB` is not a byte size"), "{e}");
    }

    #[test]
    fn durations() {
        use std::time::Duration;
        assert_eq!(duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("2h").unwrap(), Duration::from_secs(7200));
        for bad in ["", "30", "s", "3x", "1e400s", "-1s"] {
            assert!(duration(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
