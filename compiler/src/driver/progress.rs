//! Progress bars on stderr for long dealer and generator jobs (sharing 100 000 records takes
//! seconds to minutes).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Above this many records, long-running tools show a progress bar on stderr.
pub const PROGRESS_THRESHOLD: usize = 10_000;

/// A progress bar on stderr for `len` items, hidden for small jobs (and by indicatif itself when
/// stderr is not a terminal).
pub fn progress(len: usize, what: &str) -> ProgressBar {
    if len <= PROGRESS_THRESHOLD {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta} left)",
    ) {
        bar.set_style(style);
    }
    bar.set_message(what.to_string());
    bar
}
