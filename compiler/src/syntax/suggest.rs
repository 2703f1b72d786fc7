//! "Did you mean" suggestions: the closest known name by edit distance. The parser uses them
//! for unknown functions, `sema` for unknown names.

/// The closest candidate by edit distance, if it is close enough to be a plausible typo
/// (at most one edit per three characters, and at least one).
pub fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    // Ties go to the alphabetically first name so that messages are deterministic.
    scored.sort();
    scored.first().map(|(_, c)| *c)
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != *cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
