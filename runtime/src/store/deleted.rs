//! Deleted records of a gallery store: the ids in a file beside it (`<store>.deleted`), each
//! a little-endian u64, appended and synced before a deletion is acknowledged, readable by
//! the owner only. A party loading the store gives every deleted record an empty mask, so its
//! mask overlap with any query is 0 and `fhd(c, d) < t` (`hd * den < t * ml`) never holds:
//! the record can never match again, and the store's records and their hashes stay as they
//! were written.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file of `store`'s deleted ids.
pub fn path_of(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(".deleted");
    PathBuf::from(name)
}

/// The deleted ids of `store` (none when it has no such file). A torn last entry (a party
/// killed while appending, before it acknowledged) is ignored.
pub fn read(store: &Path) -> Result<Vec<u64>, String> {
    let path = path_of(store);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    crate::io::owner_only::check(&path, &meta, "a gallery's deleted record ids")?;
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// Appends `ids` to `store`'s deleted ids and syncs them (the file created owner-only).
pub fn append(store: &Path, ids: &[u64]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = path_of(store);
    let created = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // A torn entry of an earlier, unacknowledged append is cut first, so entries stay aligned.
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    if len % 8 != 0 {
        f.set_len(len - len % 8).map_err(|e| e.to_string())?;
    }
    let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    f.write_all(&bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if created {
        if let Some(dir) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_ids_are_read_back_and_a_torn_entry_is_ignored_then_cut() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("db.shares");
        assert_eq!(read(&store).unwrap(), Vec::<u64>::new());
        append(&store, &[7, u64::MAX]).unwrap();
        append(&store, &[0]).unwrap();
        assert_eq!(read(&store).unwrap(), vec![7, u64::MAX, 0]);
        // A party killed half-way through an append.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(path_of(&store))
            .unwrap();
        f.write_all(&[1, 2, 3]).unwrap();
        drop(f);
        assert_eq!(read(&store).unwrap(), vec![7, u64::MAX, 0]);
        append(&store, &[9]).unwrap();
        assert_eq!(read(&store).unwrap(), vec![7, u64::MAX, 0, 9]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path_of(&store))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "owner-only");
    }

    #[test]
    fn a_file_readable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("db.shares");
        append(&store, &[1]).unwrap();
        std::fs::set_permissions(path_of(&store), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read(&store).unwrap_err().contains("chmod 600"));
    }
}
