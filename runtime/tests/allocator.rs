//! The party's allocator setting ([`irisc_runtime::sys::tune_allocator`]), checked on the main
//! thread, where a party runs its protocol (a test harness runs tests on other threads, whose
//! glibc arenas mmap large chunks whatever the setting): a large buffer freed and allocated
//! again is not faulted in again page by page.

fn minor_faults() -> i64 {
    irisc_runtime::sys::rusage().map_or(0, |u| u.ru_minflt)
}

fn touch(bytes: usize) {
    let mut v: Vec<u8> = Vec::with_capacity(bytes);
    v.resize(bytes, 1);
    std::hint::black_box(&v);
}

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        println!("allocator: glibc only, skipped");
        return;
    }
    irisc_runtime::sys::tune_allocator();
    // 64 MiB: glibc's defaults, and the 32 MiB mmap threshold this setting replaced, mmap and
    // unmap it, 16 384 faults a time.
    let bytes = 64 << 20;
    touch(bytes);
    let before = minor_faults();
    touch(bytes);
    let again = minor_faults() - before;
    assert!(
        again < 1024,
        "{again} page faults to fault a freed 64 MiB buffer in again on the main thread"
    );
    println!("allocator: a freed 64 MiB buffer came back with {again} page faults: ok");
}
