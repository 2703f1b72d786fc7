//! A serving party's Prometheus metrics, rendered at `GET /metrics` of its client API:
//! requests by type and outcome with their latency, batches with their size and time, the
//! gallery's size, the bytes and messages the party sent to the other parties, and the
//! process's CPU seconds and major page faults. No value
//! of a share, key or token is ever a label or a value.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const REQUESTS: &str = "irisc_requests_total";
pub const REQUEST_SECONDS: &str = "irisc_request_seconds";
pub const BATCHES: &str = "irisc_batches_total";
pub const BATCH_QUERIES: &str = "irisc_batch_queries";
pub const BATCH_SECONDS: &str = "irisc_batch_seconds";
pub const GALLERY_RECORDS: &str = "irisc_gallery_records";
pub const PENDING: &str = "irisc_pending_requests";
pub const SENT_BYTES: &str = "irisc_sent_bytes_total";
pub const SENT_MESSAGES: &str = "irisc_sent_messages_total";
pub const ENROLLED: &str = "irisc_enrolled_total";
/// The process's CPU seconds and major page faults (pages read back from disk: a gallery
/// store the page cache no longer holds), as of the last batch's end.
pub const CPU_SECONDS: &str = "irisc_process_cpu_seconds_total";
pub const MAJOR_PAGE_FAULTS: &str = "irisc_process_major_page_faults_total";

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process's recorder (once) and returns what renders it; None when another
/// recorder was installed first (then `/metrics` says so).
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let seconds = [
                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.5, 5.0, 10.0, 30.0, 60.0,
                120.0,
            ];
            let queries = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &seconds)
                .ok()?
                .set_buckets_for_metric(Matcher::Full(BATCH_QUERIES.into()), &queries)
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            metrics::describe_counter!(REQUESTS, "client requests answered, by type and outcome");
            metrics::describe_histogram!(
                REQUEST_SECONDS,
                "seconds from a request's arrival to its answer, by type"
            );
            metrics::describe_counter!(BATCHES, "batches computed");
            metrics::describe_histogram!(BATCH_QUERIES, "queries per batch");
            metrics::describe_histogram!(BATCH_SECONDS, "seconds per batch, agreement to answers");
            metrics::describe_gauge!(GALLERY_RECORDS, "records of the party's galleries");
            metrics::describe_gauge!(PENDING, "requests received and waiting for a batch");
            metrics::describe_counter!(SENT_BYTES, "payload bytes sent to the other parties");
            metrics::describe_counter!(SENT_MESSAGES, "messages sent to the other parties");
            metrics::describe_counter!(ENROLLED, "records enrolled into the galleries");
            metrics::describe_counter!(
                CPU_SECONDS,
                "CPU seconds of the party's process, as of the last batch's end"
            );
            metrics::describe_counter!(
                MAJOR_PAGE_FAULTS,
                "pages the party's process read back from disk (gallery stores the page cache had dropped), as of the last batch's end"
            );
            Some(handle)
        })
        .as_ref()
}

/// The text exposition of every metric.
pub fn render() -> String {
    match HANDLE.get().and_then(|h| h.as_ref()) {
        Some(h) => h.render(),
        None => "# no metrics recorder in this process\n".into(),
    }
}
