//! Files that hold one party's secrets (share files, gallery stores, preprocessing material,
//! private keys) must be readable by their owner only: irisc creates them 0600, and refuses to
//! use one that group or other users can access, as ssh does with its keys. Another local user
//! who could read the file would hold that party's shares (issue 16, point 4).

use std::fs::Metadata;
use std::path::Path;

/// The permission bits that must be clear: any access by the group or by others.
pub const SHARED_BITS: u32 = 0o077;

/// The file's mode when group or others may access it (`None`: owner only, or a platform
/// without Unix permissions).
pub fn exposed_mode(meta: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        (mode & SHARED_BITS != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Why a file holding `what` at `path` with `mode` is refused, and the fix.
pub fn refusal(path: &Path, what: &str, mode: u32) -> String {
    format!(
        "{} holds {what} but other users can access it (mode {mode:04o}): a file holding one \
         party's secrets must be readable by its owner only; run `chmod 600 {}` (and check who \
         could have read it)",
        path.display(),
        path.display()
    )
}

/// `Err(refusal)` when the file behind `meta` is not owner-only.
pub fn check(path: &Path, meta: &Metadata, what: &str) -> Result<(), String> {
    match exposed_mode(meta) {
        Some(mode) => Err(refusal(path, what, mode)),
        None => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_owner_only_files_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p0.shares");
        std::fs::write(&path, b"x").unwrap();
        for (mode, ok) in [
            (0o600, true),
            (0o400, true),
            (0o700, true),
            (0o640, false),
            (0o604, false),
            (0o620, false),
            (0o644, false),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            let got = check(&path, &meta, "party 0's shares");
            assert_eq!(got.is_ok(), ok, "mode {mode:o}: {got:?}");
            if let Err(e) = got {
                assert!(
                    e.contains(&format!("mode {mode:04o}")) && e.contains("chmod 600"),
                    "{e}"
                );
            }
        }
    }
}
