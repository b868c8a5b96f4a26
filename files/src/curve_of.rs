//! Which curve a circom `.r1cs`/`.wtns` or snarkjs `.zkey` is for, from its header's
//! primes alone (a few hundred bytes read, whatever the file's size or curve): what
//! picks the curve to prove a file on.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crucible_core::curve::Curve;
use crucible_core::key_file::open_regular;
use crucible_core::Result;

use crate::binfile::{BinFile, Named};
use crate::encoding::{read_curve, FieldRole};
use crate::zkey::{header_curve, GROTH16_HEADER};

/// The header section of a `.r1cs` and of a `.wtns`: its first field is the prime.
const PRIME_HEADER: u32 = 1;

/// The curve of the circom or snarkjs file at `path`, told apart by its magic.
pub fn curve_of(path: &Path) -> Result<Curve> {
    let (file, _) = open_regular(path, "circom or snarkjs file")?;
    curve_of_reader(std::io::BufReader::new(file), &path.display().to_string())
}

/// [`curve_of`] from any seekable reader; `name` is used in error messages.
pub fn curve_of_reader<R: Read + Seek>(mut reader: R, name: &str) -> Result<Curve> {
    let named = Named(name.to_string());
    let mut magic = [0u8; 4];
    reader
        .read_exact(&mut magic)
        .and_then(|_| reader.seek(SeekFrom::Start(0)))
        .map_err(|e| named.io("the file's magic", e))?;
    let (kind, max_version) = match &magic {
        b"r1cs" => ("circom .r1cs", 1),
        b"wtns" => ("circom .wtns", 2),
        b"zkey" => ("snarkjs .zkey", 1),
        _ => {
            return Err(named.error(
                "not a circom .r1cs or .wtns nor a snarkjs .zkey (its magic is none of theirs)",
            ))
        }
    };
    let mut file = BinFile::new(reader, named, &magic, kind, max_version)?;
    if &magic == b"zkey" {
        header_curve(&mut file.section(GROTH16_HEADER, "Groth16 header")?)
    } else {
        read_curve(
            &mut file.section(PRIME_HEADER, "header")?,
            FieldRole::Scalar,
        )
    }
}
