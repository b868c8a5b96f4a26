//! The memory a process may really use: inside a container or a systemd slice the
//! cgroup's limit, not the host's memory, is what the kernel's out-of-memory killer
//! enforces. Read from cgroup v2 (`memory.max`) and v1 (`memory.limit_in_bytes`), for
//! the process's own cgroup and every ancestor (a parent's limit binds its children),
//! and the smallest taken. And how many processes of those cgroups that killer has
//! killed (v2 `memory.events`, v1 `memory.oom_control`: `oom_kill N`).

use std::path::{Path, PathBuf};

/// Where cgroup file systems are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A limit at or above this is "unlimited" (v1 writes `9223372036854771712`).
const UNLIMITED: u64 = 1 << 60;

/// The smallest memory limit of this process's cgroups, in bytes; `None` without one.
pub fn cgroup_memory_limit() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    limit_under(Path::new(CGROUP_ROOT), &membership)
}

/// Processes the out-of-memory killer has killed in this process's cgroups (summed
/// over the cgroup and its ancestors, so a rise in any shows); `None` where the
/// counters cannot be read.
pub fn cgroup_oom_kills() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    oom_kills_under(Path::new(CGROUP_ROOT), &membership)
}

/// The smallest limit under `root` for the memberships `membership` lists (the text
/// of `/proc/self/cgroup`: `id:controllers:path` a line).
fn limit_under(root: &Path, membership: &str) -> Option<u64> {
    cgroup_files(root, membership, "memory.max", "memory.limit_in_bytes")
        .iter()
        .filter_map(|f| read_limit(f))
        .min()
}

fn oom_kills_under(root: &Path, membership: &str) -> Option<u64> {
    let counts: Vec<u64> = cgroup_files(root, membership, "memory.events", "memory.oom_control")
        .iter()
        .filter_map(|f| read_oom_kills(f))
        .collect();
    (!counts.is_empty()).then(|| counts.iter().sum())
}

/// The files named `v2` (cgroup v2) or `v1` (the v1 memory controller) of every
/// memory cgroup `membership` lists under `root`, and of their ancestors.
fn cgroup_files(root: &Path, membership: &str, v2: &str, v1: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (mount, file) = if id == "0" && controllers.is_empty() {
            (root.to_path_buf(), v2)
        } else if controllers.split(',').any(|c| c == "memory") {
            (root.join("memory"), v1)
        } else {
            continue;
        };
        // The path and its ancestors; inside a cgroup namespace the mount's root is
        // the process's own cgroup, which the walk reaches last.
        let mut dir = PathBuf::from(path.trim_start_matches('/'));
        loop {
            files.push(mount.join(&dir).join(file));
            if !dir.pop() {
                break;
            }
        }
    }
    files
}

fn read_limit(file: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let bytes: u64 = text.trim().parse().ok()?; // `max`: no limit
    (bytes < UNLIMITED).then_some(bytes)
}

fn read_oom_kills(file: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_limit_of_the_cgroup_and_its_ancestors_v1_or_v2() {
        let root = std::env::temp_dir().join(format!("crucible-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |file: &str, text: &str| {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // v2: the slice limits to 3 GiB, the service itself is unlimited.
        write("system.slice/memory.max", "3221225472\n");
        write("system.slice/prover.service/memory.max", "max\n");
        let v2 = "0::/system.slice/prover.service\n";
        assert_eq!(limit_under(&root, v2), Some(3 << 30));
        // v1: unlimited at the path, 2 GiB at the namespace's root.
        write(
            "memory/docker/abc/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        write("memory/memory.limit_in_bytes", "2147483648\n");
        let v1 = "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n";
        assert_eq!(limit_under(&root, v1), Some(2 << 30));
        // Both mounted: the smaller wins; none: no limit.
        assert_eq!(limit_under(&root, &format!("{v1}{v2}")), Some(2 << 30));
        assert_eq!(limit_under(&root, "1:cpu:/\n"), None);
        assert_eq!(limit_under(&root.join("nowhere"), v2), None);
        // The killer's count, summed up the tree; none where nothing can be read.
        write("system.slice/memory.events", "low 0\noom 2\noom_kill 2\n");
        write(
            "system.slice/prover.service/memory.events",
            "oom 1\noom_kill 1\n",
        );
        write(
            "memory/memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n",
        );
        assert_eq!(oom_kills_under(&root, v2), Some(3));
        assert_eq!(oom_kills_under(&root, v1), Some(4));
        assert_eq!(oom_kills_under(&root, "1:cpu:/\n"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
