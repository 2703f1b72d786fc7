//! The answers of a serving party's writes (enrolments, resets, deletions), kept on disk so
//! that a party killed after a write is answered again after its restart.
//!
//! A write is answered only when all three stores hold it (`enrol`); its answer is then
//! appended here, one JSON line, and synced, before any client hears it. A party that restarts
//! loads the answers, so a client's retry under the same id is answered at once, and a retry
//! under a derived id (`wire::derived_request_id`) that the parties find already applied gets
//! the first attempt's answer, not one computed against the gallery that now holds it.
//!
//! A line torn by a crash (the last one, written without its newline) is skipped. The file
//! sits next to the party's first gallery store and, like it, is readable by its owner only.
//! It stays bounded while the party runs: past twice the answers a party remembers, it is cut
//! to those ([`Journal::append_keeping`]), as at start.

use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::wire::Answer;
use crate::error::RuntimeError;

/// The journal of one party.
pub struct Journal {
    path: PathBuf,
    /// Answers the file holds, as far as this process knows (read, appended, kept).
    lines: AtomicUsize,
}

impl Journal {
    /// The journal beside gallery store `store` (`<store>.answers`).
    pub fn beside(store: &Path) -> Journal {
        let mut name = store.as_os_str().to_owned();
        name.push(".answers");
        Journal {
            path: PathBuf::from(name),
            lines: AtomicUsize::new(0),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The answers written so far, oldest first (none when there is no journal yet). Refused
    /// when the file is readable by others.
    pub fn read(&self) -> Result<Vec<Answer>, RuntimeError> {
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.error("read", e)),
        };
        let meta = file.metadata().map_err(|e| self.error("read", e))?;
        crate::io::owner_only::check(&self.path, &meta, "a party's answers")
            .map_err(RuntimeError::Input)?;
        let mut out = Vec::new();
        for line in std::io::BufReader::new(file).split(b'\n') {
            let line = line.map_err(|e| self.error("read", e))?;
            // A torn last line (a crash mid-append) is no answer: its write was not answered.
            if let Ok(a) = serde_json::from_slice::<Answer>(&line) {
                out.push(a);
            }
        }
        self.lines.store(out.len(), Ordering::Relaxed);
        Ok(out)
    }

    /// Appends `answers` and syncs them to disk.
    pub fn append(&self, answers: &[&Answer]) -> Result<(), RuntimeError> {
        if answers.is_empty() {
            return Ok(());
        }
        let mut text = Vec::new();
        for a in answers {
            serde_json::to_writer(&mut text, a)
                .map_err(|e| RuntimeError::Setup(format!("an answer cannot be written: {e}")))?;
            text.push(b'\n');
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| self.error("open", e))?;
        // A torn line before ours (a crash mid-append) must not swallow our first line.
        let starts_clean =
            file.metadata().map(|m| m.len() == 0).unwrap_or(true) || ends_with_newline(&self.path);
        if !starts_clean {
            text.insert(0, b'\n');
        }
        file.write_all(&text).map_err(|e| self.error("write", e))?;
        file.sync_data().map_err(|e| self.error("sync", e))?;
        self.lines.fetch_add(answers.len(), Ordering::Relaxed);
        Ok(())
    }

    /// [`Journal::append`], then, when the file holds more than twice `keep` answers, cuts it
    /// to the last `keep` ([`Journal::keep_last`]): a party that runs for months keeps a
    /// journal of at most 2 x `keep` lines, rewritten once per `keep` writes.
    pub fn append_keeping(&self, answers: &[&Answer], keep: usize) -> Result<(), RuntimeError> {
        self.append(answers)?;
        if self.lines.load(Ordering::Relaxed) > keep.saturating_mul(2) {
            let all = self.read()?;
            self.keep_last(&all, keep)?;
        }
        Ok(())
    }

    /// Rewrites the journal with only the last `keep` of `answers` (what [`Journal::read`]
    /// gave) when it holds more: into a new file, synced, renamed over the journal, the
    /// directory synced, so a crash leaves the old journal or the new one. A party does this at
    /// start, so the journal stays as long as the answers it remembers.
    pub fn keep_last(&self, answers: &[Answer], keep: usize) -> Result<(), RuntimeError> {
        if answers.len() <= keep {
            return Ok(());
        }
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        let fresh = Journal {
            path: tmp.clone(),
            lines: AtomicUsize::new(0),
        };
        let kept: Vec<&Answer> = answers[answers.len() - keep..].iter().collect();
        fresh.append(&kept)?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.error("replace", e))?;
        self.lines.store(keep, Ordering::Relaxed);
        if let Some(dir) = self.path.parent() {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    fn error(&self, what: &str, e: std::io::Error) -> RuntimeError {
        RuntimeError::Input(format!("cannot {what} {}: {e}", self.path.display()))
    }
}

fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut last = [0u8; 1];
    f.seek(SeekFrom::End(-1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] == b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: &str, enrolled: bool) -> Answer {
        Answer {
            request_id: id.into(),
            party: 0,
            queries: 1,
            answers: vec![serde_json::value::RawValue::from_string(
                r#"{"query":0,"ids":[]}"#.into(),
            )
            .unwrap()],
            enrolled: Some(enrolled),
            deleted: Vec::new(),
            retry: false,
            error: None,
        }
    }

    /// Answers come back as written, across appends; a torn last line is skipped and the next
    /// append starts a line of its own; keeping the last few drops the older ones; the file is
    /// the owner's alone, and one that others can read is refused.
    #[test]
    fn answers_survive_appends_and_a_torn_line() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::beside(&dir.path().join("left.store"));
        assert!(j.read().unwrap().is_empty());
        j.append(&[&answer("a", true), &answer("b", false)])
            .unwrap();
        let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A crash mid-append leaves a line without its end.
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(br#"{"request_id":"c","par"#)
            .unwrap();
        j.append(&[&answer("d", true)]).unwrap();
        let got: Vec<(String, Option<bool>)> = j
            .read()
            .unwrap()
            .into_iter()
            .map(|a| (a.request_id, a.enrolled))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a".into(), Some(true)),
                ("b".into(), Some(false)),
                ("d".into(), Some(true))
            ]
        );
        // Kept to the last two: the older ones are gone, the file is still the owner's.
        let all = j.read().unwrap();
        j.keep_last(&all, 2).unwrap();
        let ids: Vec<String> = j
            .read()
            .unwrap()
            .into_iter()
            .map(|a| a.request_id)
            .collect();
        assert_eq!(ids, vec!["b".to_string(), "d".to_string()]);
        let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        j.keep_last(&j.read().unwrap(), 5).unwrap();
        assert_eq!(j.read().unwrap().len(), 2);
        std::fs::set_permissions(j.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(j
            .read()
            .unwrap_err()
            .to_string()
            .contains("a party's answers"));
    }

    /// Appending one answer at a time with `append_keeping(.., 3)`: the file never holds more
    /// than 6 answers, always holds the last 3 written (in order), and stays the owner's.
    #[test]
    fn a_running_party_keeps_its_journal_bounded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::beside(&dir.path().join("left.store"));
        j.read().unwrap();
        for i in 0..20 {
            j.append_keeping(&[&answer(&format!("w{i}"), true)], 3)
                .unwrap();
            let ids: Vec<String> = Journal::beside(&dir.path().join("left.store"))
                .read()
                .unwrap()
                .into_iter()
                .map(|a| a.request_id)
                .collect();
            assert!(ids.len() <= 6, "after w{i}: {ids:?}");
            let last: Vec<String> = (i.max(2) - 2..=i).map(|k| format!("w{k}")).collect();
            assert!(ids.ends_with(&last), "after w{i}: {ids:?}");
        }
        let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
