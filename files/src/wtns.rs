//! circom's `.wtns` witness files (iden3 format, version 2): a header (prime, number of
//! values) and every wire's value, in the `.r1cs` wire order.

use std::io::{Read, Seek};
use std::path::Path;

use ark_ff::One;

use crate::binfile::{self, BinFile};
use crate::bulk::read_all;
use crate::encoding::{check_proved, fr_plain_checked, read_curve, FieldRole, FR_BYTES};
use crucible_core::{Fr, Result};

const HEADER: u32 = 1;
const VALUES: u32 = 2;

/// Reads and validates a `.wtns` file: the full assignment, wire 0 (the constant one)
/// first.
pub fn read_witness(path: &Path) -> Result<Vec<Fr>> {
    from_bin(binfile::open(path, b"wtns", "circom .wtns", 2)?)
}

/// Reads a `.wtns` from any seekable reader; `name` is used in error messages.
pub fn read_witness_from<R: Read + Seek>(reader: R, name: &str) -> Result<Vec<Fr>> {
    from_bin(BinFile::new(
        reader,
        binfile::Named(name.to_string()),
        b"wtns",
        "circom .wtns",
        2,
    )?)
}

fn from_bin<R: Read + Seek>(mut file: BinFile<R>) -> Result<Vec<Fr>> {
    let mut h = file.section(HEADER, "header")?;
    let curve = read_curve(&mut h, FieldRole::Scalar)?;
    check_proved(h.name, curve, "witness")?;
    let count = h.usize32()?;
    h.finish()?;
    let mut s = file.section(VALUES, "witness values")?;
    if s.size() != (count * FR_BYTES) as u64 {
        return Err(s.name.error(format!(
            "the header announces {count} values ({} bytes), the values section has {} bytes",
            count * FR_BYTES,
            s.size()
        )));
    }
    let values = read_all(&mut s, count, FR_BYTES, fr_plain_checked)?;
    s.finish()?;
    match values.first() {
        Some(one) if one.is_one() => Ok(values),
        Some(other) => Err(file.name.error(format!(
            "wire 0 must be the constant 1, the witness has {other}"
        ))),
        None => Err(file.name.error("the witness is empty")),
    }
}
