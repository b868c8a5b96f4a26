//! Loading `.zkey` keys: the writer against snarkjs' own file, large keys read in
//! bulk and checked over all cores, and bad points deep in a large query named by
//! section and index.

use std::io::Cursor;
use std::path::Path;

use crucible_files::validated_keys::ValidatedKeys;
use crucible_files::{SubgroupChecks, Zkey};

use crate::bad_points;
use crate::big_zkey;

use bad_points::{non_subgroup_g1_zkey_bytes, non_subgroup_g2_zkey_bytes};
use big_zkey::{big_zkey, big_zkey_bytes};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// The sections of an iden3 container: (type, body).
fn sections(data: &[u8]) -> Vec<(u32, &[u8])> {
    let count = u32::from_le_bytes(data[8..12].try_into().unwrap());
    let mut pos = 12;
    (0..count)
        .map(|_| {
            let kind = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap());
            let size = u64::from_le_bytes(data[pos + 4..pos + 12].try_into().unwrap()) as usize;
            let body = &data[pos + 12..pos + 12 + size];
            pos += 12 + size;
            (kind, body)
        })
        .collect()
}

fn body_offset(data: &[u8], kind: u32) -> usize {
    let (_, body) = sections(data)
        .into_iter()
        .find(|(k, _)| *k == kind)
        .unwrap_or_else(|| panic!("no section {kind}"));
    body.as_ptr() as usize - data.as_ptr() as usize
}

fn read(data: Vec<u8>) -> crucible_core::Result<Zkey> {
    Zkey::<crucible_core::Bls12_381>::from_reader(Cursor::new(data), "big.zkey")
}

fn same_key(x: &Zkey, y: &Zkey) {
    assert_eq!(x.proving_key, y.proving_key);
    assert_eq!(
        (x.num_public, x.num_wires, x.num_constraints, x.domain_size),
        (y.num_public, y.num_wires, y.num_constraints, y.domain_size)
    );
    assert_eq!(x.a, y.a);
    assert_eq!(x.b, y.b);
}

#[test]
fn written_keys_are_snarkjs_sections_byte_for_byte() {
    let original = fixture("multi_public.zkey");
    let key = read(original.clone()).unwrap();
    let mut written = Vec::new();
    key.write_to(&mut written).unwrap();
    let theirs = sections(&original);
    let ours = sections(&written);
    // snarkjs' sections 1 to 9, in its order; its section 10 (contributions) is not
    // written.
    assert_eq!(ours.len(), 9);
    assert_eq!(ours, theirs[..9]);
    assert_eq!(theirs[9].0, 10);
    same_key(&read(written).unwrap(), &key);
}

#[test]
fn large_keys_round_trip() {
    let key = big_zkey(12, 3000, 5);
    let mut bytes = Vec::new();
    key.write_to(&mut bytes).unwrap();
    same_key(&read(bytes).unwrap(), &key);
}

/// One key of 2^13 H points and 4000 wires; each damaged copy has one bad point
/// near the end of a query, which the parallel decoder must find and name.
#[test]
fn bad_points_deep_in_large_queries_are_named_by_index() {
    let good = big_zkey_bytes(13, 4000, 11);
    let damage = |kind: u32, index: usize, size: usize, bytes: &[u8]| {
        let mut data = good.clone();
        let at = body_offset(&good, kind) + index * size;
        data[at..at + size].copy_from_slice(bytes);
        read(data).unwrap_err().to_string()
    };
    let g1 = 96;
    let g2 = 192;

    // Off the curve: y + 1 (Montgomery limbs of y changed in the lowest bit).
    let mut off_curve = good[body_offset(&good, 9) + 8000 * g1..][..g1].to_vec();
    off_curve[g1 / 2] ^= 1;
    let e = damage(9, 8000, g1, &off_curve);
    assert!(
        e.contains("big.zkey")
            && e.contains("section `points H`, element 8000 of 8192")
            && (e.contains("not on the curve") || e.contains("not below the field modulus")),
        "{e}"
    );

    let e = damage(5, 3990, g1, &non_subgroup_g1_zkey_bytes());
    assert!(
        e.contains("section `points A`, element 3990 of 4000")
            && e.contains("not in the prime-order subgroup"),
        "{e}"
    );

    let e = damage(7, 3777, g2, &non_subgroup_g2_zkey_bytes());
    assert!(
        e.contains("section `points B2`, element 3777 of 4000")
            && e.contains("not in the prime-order subgroup"),
        "{e}"
    );

    // Two bad points in one query: the lower index is named.
    let mut data = good.clone();
    let base = body_offset(&good, 8);
    for index in [3500usize, 1234] {
        data[base + index * g1..base + (index + 1) * g1]
            .copy_from_slice(&non_subgroup_g1_zkey_bytes());
    }
    let e = read(data).unwrap_err().to_string();
    assert!(
        e.contains("section `points C`, element 1234 of 3998"),
        "{e}"
    );
}

/// A key read a second time skips the subgroup checks; the same path holding other
/// bytes (a point moved out of the subgroup) is checked again and refused, and never
/// remembered.
#[test]
fn checked_keys_are_remembered_by_their_bytes() {
    let dir = std::env::temp_dir().join(format!("crucible-zkey-memo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let validated = ValidatedKeys::at(dir.join("validated"));
    let path = dir.join("k.zkey");
    let good = big_zkey_bytes(10, 900, 3);
    std::fs::write(&path, &good).unwrap();
    let (first, checks) =
        Zkey::<crucible_core::Bls12_381>::read_remembering(&path, &validated).unwrap();
    assert_eq!(checks, SubgroupChecks::Ran);
    let (again, checks) =
        Zkey::<crucible_core::Bls12_381>::read_remembering(&path, &validated).unwrap();
    assert_eq!(checks, SubgroupChecks::Remembered);
    let never = || false;
    let (_, checks) =
        Zkey::<crucible_core::Bls12_381>::read_remembering_until(&path, &validated, &never)
            .unwrap()
            .expect("a read never called off");
    assert_eq!(checks, SubgroupChecks::Remembered);
    same_key(&first, &again);
    same_key(&first, &read(good.clone()).unwrap());

    let mut bad = good.clone();
    let at = body_offset(&good, 6) + 321 * 96;
    bad[at..at + 96].copy_from_slice(&non_subgroup_g1_zkey_bytes());
    std::fs::write(&path, &bad).unwrap();
    for _ in 0..2 {
        let e = Zkey::<crucible_core::Bls12_381>::read_remembering(&path, &validated)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("section `points B1`, element 321 of 900")
                && e.contains("not in the prime-order subgroup"),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The header is checked in one place for a whole read and a header-only read: both
/// refuse a domain that is not a power of two, more public signals than the wires
/// hold, and a key of another snarkjs protocol, with the same message.
#[test]
fn a_bad_header_is_refused_alike_by_a_whole_read_and_a_header_read() {
    let good = fixture("multi_public.zkey");
    let key = read(good.clone()).unwrap();
    // After the two primes (a length word and 48 bytes, a length word and 32 bytes).
    let sizes = body_offset(&good, 2) + 4 + 48 + 4 + 32;
    let word = |at: usize| u32::from_le_bytes(good[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(
        (word(sizes), word(sizes + 4), word(sizes + 8)),
        (key.num_wires, key.num_public, key.domain_size)
    );
    let with = |at: usize, value: u32| {
        let mut data = good.clone();
        data[at..at + 4].copy_from_slice(&value.to_le_bytes());
        data
    };
    let dir = std::env::temp_dir().join(format!("crucible-zkey-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.zkey");
    let wires = key.num_wires as u32;
    for (data, want) in [
        (
            with(sizes + 8, 3),
            "domain size 3 is not a power of two".to_string(),
        ),
        (
            with(sizes + 4, wires),
            format!("{wires} public signals do not fit in {wires} wires"),
        ),
        (
            with(body_offset(&good, 1), 2),
            "snarkjs protocol 2, not Groth16 (1)".to_string(),
        ),
    ] {
        let whole = read(data.clone()).unwrap_err().to_string();
        std::fs::write(&path, &data).unwrap();
        let header = Zkey::<crucible_core::Bls12_381>::read_header(&path)
            .unwrap_err()
            .to_string();
        assert!(whole.contains(&want), "{whole}");
        assert!(header.contains(&want), "{header}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The file position of the descriptor this process holds open on `path`, if any.
fn open_position(path: &Path) -> Option<u64> {
    for fd in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        if std::fs::read_link(fd.path()).is_ok_and(|target| target == path) {
            let info = std::fs::read_to_string(format!(
                "/proc/self/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .ok()?;
            let pos = info.lines().find_map(|l| l.strip_prefix("pos:"))?;
            return pos.trim().parse().ok();
        }
    }
    None
}

/// A key of 2^22 wires, a sparse file of 1.9 GB: a small key's protocol, header (its
/// wires made 2^22), IC and coefficients, then queries of zeros (points at infinity),
/// but for the last point of A, which is not a point. A read that is never called off
/// reads section A to that point and fails there; called off once it is a block (64
/// MiB) into A, it ends `Ok(None)` without reaching it; called off from the start, it
/// reads nothing.
#[test]
fn a_long_read_called_off_mid_section_stops_between_blocks() {
    use std::io::{Seek, SeekFrom, Write};
    use std::sync::atomic::{AtomicBool, Ordering};

    let dir = std::env::temp_dir().join(format!("crucible-zkey-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let validated = ValidatedKeys::at(dir.join("validated"));
    let path = dir.join("large.zkey");
    let small = big_zkey_bytes(4, 3, 7);
    let body = |kind: u32| {
        let (_, body) = sections(&small)
            .into_iter()
            .find(|(k, _)| *k == kind)
            .unwrap();
        body
    };
    let wires: u64 = 1 << 22;
    let mut header = body(2).to_vec();
    // n8q, q (48 bytes), n8r, r (32 bytes), then the number of wires.
    header[88..92].copy_from_slice(&(wires as u32).to_le_bytes());
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(b"zkey").unwrap();
    file.write_all(&1u32.to_le_bytes()).unwrap();
    file.write_all(&9u32.to_le_bytes()).unwrap();
    for (kind, bytes) in [(1, body(1)), (2, &header[..]), (3, body(3)), (4, body(4))] {
        file.write_all(&(kind as u32).to_le_bytes()).unwrap();
        file.write_all(&(bytes.len() as u64).to_le_bytes()).unwrap();
        file.write_all(bytes).unwrap();
    }
    let mut a_start = 0;
    for (kind, size) in [
        (5u32, wires * 96),
        (6, wires * 96),
        (7, wires * 192),
        (8, (wires - 2) * 96),
        (9, 16 * 96),
    ] {
        file.write_all(&kind.to_le_bytes()).unwrap();
        file.write_all(&size.to_le_bytes()).unwrap();
        let start = file.stream_position().unwrap();
        if kind == 5 {
            a_start = start;
            file.seek(SeekFrom::Start(start + size - 96)).unwrap();
            file.write_all(&[0xff; 96]).unwrap();
        }
        file.set_len(start + size).unwrap();
        file.seek(SeekFrom::Start(start + size)).unwrap();
    }
    drop(file);

    let e = Zkey::<crucible_core::Bls12_381>::read_remembering(&path, &validated)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "section `points A`, element {} of {wires}",
            wires - 1
        )),
        "{e}"
    );

    // Called off by another party once the read is past A's first block; it then goes
    // on saying so.
    let called_off = AtomicBool::new(false);
    let stop = || {
        if open_position(&path).is_some_and(|pos| pos > a_start + (64 << 20)) {
            called_off.store(true, Ordering::SeqCst);
        }
        called_off.load(Ordering::SeqCst)
    };
    let read =
        Zkey::<crucible_core::Bls12_381>::read_remembering_until(&path, &validated, &stop).unwrap();
    assert!(read.is_none(), "the read went on after it was called off");
    assert!(called_off.load(Ordering::SeqCst));

    let read =
        Zkey::<crucible_core::Bls12_381>::read_remembering_until(&path, &validated, &|| true)
            .unwrap();
    assert!(read.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
