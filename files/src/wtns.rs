//! circom's `.wtns` witness files (iden3 format, version 2): a header (prime, number of
//! values) and every wire's value, in the `.r1cs` wire order.

use std::io::{Read, Seek};
use std::path::Path;

use ark_ff::One;

use crate::binfile::{self, BinFile};
use crate::bulk::read_all;
use crate::encoding::{check_curve, fr_plain_checked, read_curve, FieldRole, FR_BYTES};
use crate::file_curve::FileCurve;
use crucible_core::Result;

const HEADER: u32 = 1;
const VALUES: u32 = 2;

/// Reads and validates a `.wtns` file of the curve `E`: the full assignment, wire 0
/// (the constant one) first. A witness of another curve is refused, naming both.
pub fn read_witness<E: FileCurve>(path: &Path) -> Result<Vec<E::ScalarField>> {
    from_bin::<E, _>(binfile::open(path, b"wtns", "circom .wtns", 2)?)
}

/// Reads a `.wtns` from any seekable reader; `name` is used in error messages.
pub fn read_witness_from<E: FileCurve, R: Read + Seek>(
    reader: R,
    name: &str,
) -> Result<Vec<E::ScalarField>> {
    from_bin::<E, _>(BinFile::new(
        reader,
        binfile::Named(name.to_string()),
        b"wtns",
        "circom .wtns",
        2,
    )?)
}

fn from_bin<E: FileCurve, R: Read + Seek>(mut file: BinFile<R>) -> Result<Vec<E::ScalarField>> {
    let mut h = file.section(HEADER, "header")?;
    let curve = read_curve(&mut h, FieldRole::Scalar)?;
    check_curve(h.name, curve, E::CURVE, "witness")?;
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
    let values = read_all(&mut s, count, FR_BYTES, fr_plain_checked::<E>)?;
    s.finish()?;
    match values.first() {
        Some(one) if one.is_one() => Ok(values),
        Some(other) => Err(file.name.error(format!(
            "wire 0 must be the constant 1, the witness has {other}"
        ))),
        None => Err(file.name.error("the witness is empty")),
    }
}
