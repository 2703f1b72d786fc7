//! The session a party announces in its hello: every setting the parties must share, as
//! named fields, so that a mismatch is refused before any computation with a message that names
//! the setting and both values.
//!
//! Encoded as text: the line [`SESSION_MAGIC`], then one `name\tvalue` line per field, in a
//! fixed order. Names and values never hold tabs or newlines (they are replaced by spaces).
//! Session bytes that are not in this form (tests use plain bytes) are still compared, only as
//! a whole.

/// The first line of encoded session bytes.
pub const SESSION_MAGIC: &str = "irisc session 1";

/// Field names with a meaning of their own in mismatch messages.
pub const PROGRAM: &str = "program";
/// Prefix of the fields holding an input's share set (`input NAME`) and, for gallery stores,
/// its record count (`input NAME records`).
pub const INPUT: &str = "input ";
const RECORDS_SUFFIX: &str = " records";
/// Suffix of the field holding the digest of a gallery store's record ids (`input NAME ids`).
const IDS_SUFFIX: &str = " ids";
/// What to do about gallery stores whose record counts differ.
const STORES_DIFFER: &str = "gallery stores holding other records cannot run together; stores whose record counts differ after an interrupted `irisc enroll` are mended by `irisc enroll ... --roll-back`";

/// Named settings, in the order they are compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    fields: Vec<(String, String)>,
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Adds setting `name` with `value`.
    pub fn field(mut self, name: &str, value: impl ToString) -> Session {
        self.fields.push((clean(name), clean(&value.to_string())));
        self
    }

    /// The share-set id of input `input` (hex).
    pub fn input_set(self, input: &str, set_id: &[u8]) -> Session {
        let hex: String = set_id.iter().map(|b| format!("{b:02x}")).collect();
        self.field(&format!("{INPUT}{input}"), hex)
    }

    /// The record count of gallery store `input` (a store keeps its set id across appends).
    pub fn input_records(self, input: &str, records: u64) -> Session {
        self.field(&format!("{INPUT}{input}{RECORDS_SUFFIX}"), records)
    }

    /// The digest of gallery store `input`'s record ids, in store order: equal counts of
    /// different records (or of the same records in another order) are refused too.
    pub fn input_ids(self, input: &str, ids: &[u64]) -> Session {
        let mut h = blake3::Hasher::new();
        h.update(b"irisc session record ids 1");
        for id in ids {
            h.update(&id.to_le_bytes());
        }
        self.field(
            &format!("{INPUT}{input}{IDS_SUFFIX}"),
            h.finalize().to_hex(),
        )
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut s = String::from(SESSION_MAGIC);
        s.push('\n');
        for (n, v) in &self.fields {
            s.push_str(n);
            s.push('\t');
            s.push_str(v);
            s.push('\n');
        }
        s.into_bytes()
    }

    /// The session encoded in `bytes`, or `None` if they are not in this form.
    pub fn parse(bytes: &[u8]) -> Option<Session> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != SESSION_MAGIC {
            return None;
        }
        let fields = lines
            .map(|l| {
                l.split_once('\t')
                    .map(|(n, v)| (n.to_string(), v.to_string()))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Session { fields })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A party count as a message spells it: `two`, `three`, ... `eight`, then digits.
pub fn count_word(n: usize) -> String {
    const WORDS: [&str; 9] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| w.to_string())
}

/// Every party of a run of `parties`, as the subject of a sentence: `both parties`, `all three
/// parties`.
fn all_parties(parties: usize) -> String {
    match parties {
        2 => "both parties".into(),
        n => format!("all {} parties", count_word(n)),
    }
}

/// Why party `me` (session `mine`) and party `peer` (session `theirs`) of a run of `parties`
/// cannot run together: one sentence per differing setting, naming it and both values; `None`
/// if the sessions agree.
pub fn describe_mismatch(
    parties: usize,
    me: usize,
    mine: &[u8],
    peer: usize,
    theirs: &[u8],
) -> Option<String> {
    if mine == theirs {
        return None;
    }
    let (Some(a), Some(b)) = (Session::parse(mine), Session::parse(theirs)) else {
        return Some(format!(
            "party {peer} runs another program or other share files (its session identifier differs from party {me}'s)"
        ));
    };
    let mut out = Vec::new();
    for (name, va) in &a.fields {
        let vb = b.get(name).unwrap_or("nothing");
        if va == vb {
            continue;
        }
        if said_by_the_count(&a, &b, name) {
            continue;
        }
        out.push(one_mismatch(parties, name, me, va, peer, vb));
    }
    for (name, vb) in &b.fields {
        if a.get(name).is_none() {
            out.push(one_mismatch(parties, name, me, "nothing", peer, vb));
        }
    }
    if out.is_empty() {
        out.push(format!(
            "party {peer}'s session lists its settings in another order than party {me}'s (another version of irisc?)"
        ));
    }
    Some(out.join("; "))
}

/// Why party `me` (session `mine`) cannot run with `peers` (all other parties of the run, at
/// least two), which all sent `theirs`: party `me` is the odd one, so each sentence has it as
/// the subject. `None` if the sessions agree.
pub fn describe_odd_one(me: usize, mine: &[u8], peers: &[usize], theirs: &[u8]) -> Option<String> {
    let parties = peers.len() + 1;
    let first = *peers.first()?;
    let (Some(a), Some(b)) = (Session::parse(mine), Session::parse(theirs)) else {
        return describe_mismatch(parties, me, mine, first, theirs);
    };
    let others = match peers {
        [x, y] => format!("party {x} and party {y}"),
        _ => {
            let (last, rest) = peers.split_last()?;
            let rest: Vec<String> = rest.iter().map(|p| p.to_string()).collect();
            format!("parties {} and {last}", rest.join(", "))
        }
    };
    let (all, count) = (all_parties(parties), count_word(parties));
    let mut out = Vec::new();
    for (name, va) in &a.fields {
        let vb = b.get(name).unwrap_or("nothing");
        if va == vb {
            continue;
        }
        if said_by_the_count(&a, &b, name) {
            continue;
        }
        out.push(match name.strip_prefix(INPUT) {
            Some(input) if input.ends_with(IDS_SUFFIX) => format!(
                "input {}: party {me}'s gallery store holds other record ids (digest {}) than those of {others} ({}): {STORES_DIFFER}",
                input.trim_end_matches(IDS_SUFFIX),
                short(va),
                short(vb)
            ),
            Some(input) if !input.ends_with(RECORDS_SUFFIX) => format!(
                "input {input}: party {me}'s share file is from another `irisc share` run (set {}) than those of {others} (set {}); give the {count} parties the files of one `irisc share` run",
                short(va),
                short(vb)
            ),
            Some(input) => format!(
                "input {}: party {me}'s gallery store holds {va} records but those of {others} hold {vb}: {STORES_DIFFER}",
                input.trim_end_matches(RECORDS_SUFFIX)
            ),
            None if name == PROGRAM => format!(
                "party {me} runs another program ({va}) than {others} ({vb}): {all} must run executables built from the same program"
            ),
            None => format!(
                "the parties must agree on {name}, but party {me} has {va} and {others} have {vb}"
            ),
        });
    }
    if out.is_empty() {
        return describe_mismatch(parties, me, mine, first, theirs);
    }
    Some(out.join("; "))
}

/// Whether `name` is a store's record-id digest whose record count differs too: ids differ
/// whenever counts do, and the count's message says it plainly.
fn said_by_the_count(a: &Session, b: &Session, name: &str) -> bool {
    name.strip_suffix(IDS_SUFFIX).is_some_and(|input| {
        let count = format!("{input}{RECORDS_SUFFIX}");
        a.get(&count) != b.get(&count)
    })
}

fn short(v: &str) -> String {
    if v.len() > 12 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!("{}…", &v[..8])
    } else {
        v.to_string()
    }
}

fn one_mismatch(
    parties: usize,
    name: &str,
    me: usize,
    mine: &str,
    peer: usize,
    theirs: &str,
) -> String {
    if name == PROGRAM {
        return format!(
            "party {peer} runs another program ({theirs}) than party {me} ({mine}): {} must run executables built from the same program",
            all_parties(parties)
        );
    }
    if let Some(input) = name.strip_prefix(INPUT) {
        if let Some(input) = input.strip_suffix(IDS_SUFFIX) {
            return format!(
                "input {input}: party {peer}'s gallery store holds other record ids (digest {}) than party {me}'s ({}): {STORES_DIFFER}",
                short(theirs),
                short(mine)
            );
        }
        if let Some(input) = input.strip_suffix(RECORDS_SUFFIX) {
            return format!(
                "input {input}: party {peer}'s gallery store holds {theirs} records but party {me}'s holds {mine}: {STORES_DIFFER}"
            );
        }
        return format!(
            "input {input}: party {peer}'s share file is from another `irisc share` run (set {}) than party {me}'s (set {}); give the {} parties the files of one `irisc share` run",
            short(theirs),
            short(mine),
            count_word(parties)
        );
    }
    format!(
        "the parties must agree on {name}, but party {me} has {mine} and party {peer} has {theirs}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(chunk: usize, set: u8) -> Vec<u8> {
        Session::new()
            .field(PROGRAM, "p abc")
            .field("--chunk-size", chunk)
            .input_set("q", &[set; 16])
            .input_records("db", 5)
            .to_bytes()
    }

    #[test]
    fn equal_sessions_agree_and_round_trip() {
        let s = session(10, 1);
        assert_eq!(describe_mismatch(3, 0, &s, 1, &s), None);
        assert_eq!(Session::parse(&s).unwrap().get("--chunk-size"), Some("10"));
    }

    #[test]
    fn a_mismatch_names_the_setting_and_both_values() {
        let e = describe_mismatch(3, 0, &session(4096, 1), 2, &session(1024, 1)).unwrap();
        assert_eq!(
            e,
            "the parties must agree on --chunk-size, but party 0 has 4096 and party 2 has 1024"
        );
        let e = describe_mismatch(3, 0, &session(10, 0x91), 1, &session(10, 0x3f)).unwrap();
        assert!(
            e.starts_with("input q: party 1's share file is from another `irisc share` run (set 3f3f3f3f…) than party 0's (set 91919191…)"),
            "{e}"
        );
    }

    #[test]
    fn the_odd_party_names_itself_and_both_peers() {
        let e = describe_odd_one(1, &session(10, 0x3f), &[2, 0], &session(10, 0x91)).unwrap();
        assert!(
            e.starts_with("input q: party 1's share file is from another `irisc share` run (set 3f3f3f3f…) than those of party 2 and party 0 (set 91919191…)"),
            "{e}"
        );
        let e = describe_odd_one(2, &session(7, 1), &[0, 1], &session(9, 1)).unwrap();
        assert_eq!(
            e,
            "the parties must agree on --chunk-size, but party 2 has 7 and party 0 and party 1 have 9"
        );
    }

    #[test]
    fn stores_of_equal_counts_but_other_record_ids_are_refused_by_the_ids_digest() {
        let store = |count: u64, ids: &[u64]| {
            Session::new()
                .field(PROGRAM, "p abc")
                .input_set("db", &[7; 16])
                .input_records("db", count)
                .input_ids("db", ids)
                .to_bytes()
        };
        let (a, b) = (store(3, &[1, 2, 3]), store(3, &[1, 2, 4]));
        assert_eq!(describe_mismatch(3, 0, &a, 1, &a), None);
        let e = describe_mismatch(3, 0, &a, 1, &b).unwrap();
        assert!(
            e.starts_with("input db: party 1's gallery store holds other record ids (digest ")
                && e.contains("than party 0's ("),
            "{e}"
        );
        let e = describe_odd_one(2, &b, &[0, 1], &a).unwrap();
        assert!(
            e.starts_with("input db: party 2's gallery store holds other record ids")
                && e.contains("than those of party 0 and party 1"),
            "{e}"
        );
        // The same records in another order are other stores too.
        assert!(describe_mismatch(3, 0, &a, 1, &store(3, &[3, 2, 1])).is_some());
        // Counts that differ are said as counts, once.
        let e = describe_odd_one(2, &store(4, &[1, 2, 3, 4]), &[0, 1], &a).unwrap();
        assert!(
            e.contains("holds 4 records but those of party 0 and party 1 hold 3"),
            "{e}"
        );
        assert!(!e.contains("record ids"), "{e}");
    }

    #[test]
    fn bytes_of_another_form_are_compared_whole() {
        assert!(describe_mismatch(3, 0, b"a", 1, b"b")
            .unwrap()
            .contains("party 1 runs another program or other share files"));
        assert_eq!(describe_mismatch(3, 0, b"a", 1, b"a"), None);
    }

    #[test]
    fn messages_count_the_parties_of_the_run() {
        let program = |p: &str| Session::new().field(PROGRAM, p).to_bytes();
        let e = describe_mismatch(2, 0, &program("a"), 1, &program("b")).unwrap();
        assert_eq!(
            e,
            "party 1 runs another program (b) than party 0 (a): both parties must run executables built from the same program"
        );
        let e = describe_mismatch(3, 0, &program("a"), 1, &program("b")).unwrap();
        assert!(
            e.ends_with(": all three parties must run executables built from the same program"),
            "{e}"
        );
        let e = describe_mismatch(2, 1, &session(10, 1), 0, &session(10, 2)).unwrap();
        assert!(
            e.contains("give the two parties the files of one `irisc share` run"),
            "{e}"
        );
        let e = describe_odd_one(3, &session(7, 1), &[0, 1, 2], &session(9, 1)).unwrap();
        assert_eq!(
            e,
            "the parties must agree on --chunk-size, but party 3 has 7 and parties 0, 1 and 2 have 9"
        );
        let e = describe_odd_one(0, &program("a"), &[1, 2, 3], &program("b")).unwrap();
        assert!(e.ends_with("than parties 1, 2 and 3 (b): all four parties must run executables built from the same program"), "{e}");
    }
}
