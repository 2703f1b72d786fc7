//! A simulated network between the three parties, in user space: a relay per (party, peer) that
//! forwards the TLS bytes after a one-way delay and at a limited rate, for the `net` section.
//!
//! Why not `tc netem`: it needs the kernel's `sch_netem` module and root; [`netem_available`]
//! probes for it and the report says what it found. The relay needs neither, and models what the
//! paper's WAN/LAN tables depend on: latency per message and the link's rate. Its queue is
//! unbounded (no loss), like a link with large buffers.

use anyhow::{anyhow, Context, Result};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A network profile: round-trip latency and rate of every link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetProfile {
    pub name: &'static str,
    /// Round-trip time, as `ping` reports it; each direction gets half.
    pub rtt: Duration,
    pub bits_per_s: f64,
}

/// Paper 001: servers in one city (Tables 1-4) and in three cities (Table 5).
pub const LAN: NetProfile = NetProfile {
    name: "lan 1.5 ms / 6.6 Gbit/s",
    rtt: Duration::from_micros(1500),
    bits_per_s: 6.6e9,
};
pub const WAN: NetProfile = NetProfile {
    name: "wan 32 ms / 477 Mbit/s",
    rtt: Duration::from_millis(32),
    bits_per_s: 477e6,
};

/// Whether `tc netem` can be used here (a network namespace with a netem qdisc), and if not why.
pub fn netem_available() -> std::result::Result<(), String> {
    let ns = format!("irisc-probe-{}", std::process::id());
    let run = |args: &[&str]| -> std::result::Result<(), String> {
        let out = std::process::Command::new(args[0])
            .args(&args[1..])
            .output()
            .map_err(|e| format!("{}: {e}", args[0]))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`{}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    // One probe at a time in this process: the namespace is named by the process id.
    let _probing = PROBE.lock().unwrap_or_else(|e| e.into_inner());
    run(&["ip", "netns", "add", &ns])?;
    let result =
        run(&["ip", "netns", "exec", &ns, "ip", "link", "set", "lo", "up"]).and_then(|_| {
            run(&[
                "ip", "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                "delay", "1ms",
            ])
        });
    let _ = run(&["ip", "netns", "del", &ns]);
    result
}

/// Relays for one run: for every party p and peer j, a port that party p dials to reach j.
pub struct Relays {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The relays' listening addresses, dialled once by [`Drop`] to wake their blocking
    /// accepts.
    listening: Vec<std::net::SocketAddr>,
    /// `configs[p]`: the parties file party p runs with.
    pub configs: Vec<PathBuf>,
}

impl Relays {
    /// Starts the relays for `profile` and writes `parties-p{N}.toml` beside `config` (the file
    /// `irisc keys` wrote): in party p's copy, its own address is unchanged (it listens there)
    /// and each peer's address is the relay that delays and limits p's link to it.
    pub fn start(config: &Path, profile: NetProfile) -> Result<Relays> {
        let text = std::fs::read_to_string(config)
            .with_context(|| format!("cannot read {}", config.display()))?;
        let addresses = party_addresses(&text)?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        let mut configs = Vec::new();
        let mut listening = Vec::new();
        for p in 0..3 {
            let mut dial = addresses.clone();
            for (j, target) in addresses.iter().enumerate() {
                if j == p {
                    continue;
                }
                let listener = relay_listener(&addresses)?;
                listening.push(listener.local_addr()?);
                dial[j] = listener.local_addr()?.to_string();
                let (stop, target) = (stop.clone(), target.clone());
                threads.push(std::thread::spawn(move || {
                    accept_loop(listener, &target, profile, &stop)
                }));
            }
            let path = config.with_file_name(format!("parties-p{p}.toml"));
            std::fs::write(&path, with_addresses(&text, &dial))?;
            configs.push(path);
        }
        Ok(Relays {
            stop,
            threads,
            listening,
            configs,
        })
    }
}

impl Drop for Relays {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Each accept loop blocks in `accept` until a connection comes: one wakes it, and it
        // sees the stop flag.
        for at in &self.listening {
            let _ = TcpStream::connect_timeout(at, Duration::from_secs(1));
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A loopback listener for a relay on a port that is none of the parties' own: the parties
/// start after the relays, so an ephemeral port can be one a party is about to listen on
/// (which made a relayed run dial the wrong party now and then).
fn relay_listener(parties: &[String]) -> Result<TcpListener> {
    for _ in 0..64 {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let at = listener.local_addr()?.to_string();
        if !parties.contains(&at) {
            return Ok(listener);
        }
    }
    Err(anyhow!(
        "no loopback port apart from the parties' own for a relay"
    ))
}

/// `text` (a parties file) with its k-th `address = "..."` value replaced by `addresses[k]`,
/// line by line (a textual replace of one address could also hit another party's line).
fn with_addresses(text: &str, addresses: &[String]) -> String {
    let mut k = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        if body.starts_with("address = \"") && k < addresses.len() {
            let indent = &line[..line.len() - body.len()];
            let end = if line.ends_with('\n') { "\n" } else { "" };
            out.push_str(&format!("{indent}address = \"{}\"{end}", addresses[k]));
            k += 1;
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The three `address = "..."` values of a parties file, in order.
fn party_addresses(text: &str) -> Result<Vec<String>> {
    let v: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("address = \""))
        .filter_map(|l| l.split('"').next())
        .map(str::to_string)
        .collect();
    if v.len() != 3 {
        return Err(anyhow!(
            "the parties file lists {} addresses, not 3",
            v.len()
        ));
    }
    Ok(v)
}

/// Accepts the party's connections to one relay, blocking in `accept` (a polling loop woke
/// every few milliseconds for the whole run, on the cores the parties share), and links each to
/// `target`. [`Relays`]'s `Drop` sets `stop` and dials the listener once to end the loop.
fn accept_loop(listener: TcpListener, target: &str, profile: NetProfile, stop: &AtomicBool) {
    let mut pumps = Vec::new();
    for inbound in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(inbound) = inbound else {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        };
        // The peer may still be starting: retry as a dialling party would.
        let deadline = Instant::now() + Duration::from_secs(30);
        let outbound = loop {
            match TcpStream::connect(target) {
                Ok(s) if !irisc_runtime::net::meets_itself(s.local_addr(), s.peer_addr()) => {
                    break Some(s)
                }
                Ok(_) if Instant::now() < deadline && !stop.load(Ordering::SeqCst) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(_) => break None,
                Err(_) if Instant::now() < deadline && !stop.load(Ordering::SeqCst) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(_) => break None,
            }
        };
        if let Some(outbound) = outbound {
            pumps.extend(link(inbound, outbound, profile));
        }
    }
    for p in pumps {
        let _ = p.join();
    }
}

/// Both directions of one connection.
fn link(a: TcpStream, b: TcpStream, profile: NetProfile) -> Vec<JoinHandle<()>> {
    let _ = (a.set_nodelay(true), b.set_nodelay(true));
    let (a2, b2) = match (a.try_clone(), b.try_clone()) {
        (Ok(a2), Ok(b2)) => (a2, b2),
        _ => return Vec::new(),
    };
    let mut v = direction(a, b, profile);
    v.extend(direction(b2, a2, profile));
    v
}

/// Bytes a relay reads at once: at most one such piece is stored and forwarded whole, so it
/// adds at most its time on the wire (1.1 ms at 477 Mbit/s) to the first byte's delay.
const RELAY_PIECE: usize = 64 << 10;

/// `from` -> `to`: a reader stamps each piece with its arrival; a writer delivers it half the
/// round trip later, no earlier than the link's rate allows after the previous piece. The
/// writer hands each piece's buffer back to the reader, so the relay reuses a few buffers for
/// the whole run instead of allocating (and faulting in) fresh memory per piece on the cores the
/// parties share.
fn direction(mut from: TcpStream, mut to: TcpStream, profile: NetProfile) -> Vec<JoinHandle<()>> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let (give_back, spare) = mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || loop {
        let mut buf = spare.try_recv().unwrap_or_default();
        buf.resize(RELAY_PIECE, 0);
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                buf.truncate(n);
                if tx.send((Instant::now(), buf)).is_err() {
                    break;
                }
            }
        }
    });
    let writer = std::thread::spawn(move || {
        precise_timers();
        let one_way = profile.rtt / 2;
        let mut link_free = Instant::now();
        while let Ok((arrived, bytes)) = rx.recv() {
            let on_wire = Duration::from_secs_f64(bytes.len() as f64 * 8.0 / profile.bits_per_s);
            link_free = link_free.max(arrived) + on_wire;
            let deliver = link_free + one_way;
            wait_until(deliver);
            if to.write_all(&bytes).is_err() {
                break;
            }
            // The reader may have ended; the buffer is then dropped here.
            let _ = give_back.send(bytes);
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    vec![reader, writer]
}

/// The emulated link must deliver at the profile's delay, not later: Linux lets a sleeping
/// thread wake up to its timer slack (50 us by default) late, which over the four one-way
/// trips of a 0.47 ms-RTT query would add a fifth to the latency. The relay's writers ask for
/// no slack.
fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and changes only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Sleeps until `deadline`, the last stretch by yielding: even with no timer slack
/// ([`precise_timers`]) a sleeping thread on a busy small machine wakes up late by a scheduler
/// wake-up, which the relay would add to every message.
fn wait_until(deadline: Instant) {
    const SPIN: Duration = Duration::from_micros(100);
    let now = Instant::now();
    if deadline > now + SPIN {
        std::thread::sleep(deadline - now - SPIN);
    }
    while Instant::now() < deadline {
        std::thread::yield_now();
    }
    LATENESS.record(Instant::now() - deadline);
}

/// How late the relays delivered messages after their due time (the emulation's own error,
/// reported next to the figures it shapes): count, sum and maximum, in nanoseconds.
pub struct Lateness {
    count: std::sync::atomic::AtomicU64,
    sum_ns: std::sync::atomic::AtomicU64,
    max_ns: std::sync::atomic::AtomicU64,
}

pub static LATENESS: Lateness = Lateness {
    count: std::sync::atomic::AtomicU64::new(0),
    sum_ns: std::sync::atomic::AtomicU64::new(0),
    max_ns: std::sync::atomic::AtomicU64::new(0),
};

impl Lateness {
    fn record(&self, late: Duration) {
        let ns = late.as_nanos() as u64;
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Starts counting afresh.
    pub fn reset(&self) {
        self.count.store(0, Ordering::Relaxed);
        self.sum_ns.store(0, Ordering::Relaxed);
        self.max_ns.store(0, Ordering::Relaxed);
    }

    /// (messages, mean and maximum lateness in microseconds) since the last reset.
    pub fn read(&self) -> (u64, f64, f64) {
        let n = self.count.load(Ordering::Relaxed);
        let sum = self.sum_ns.load(Ordering::Relaxed) as f64;
        let max = self.max_ns.load(Ordering::Relaxed) as f64;
        (
            n,
            if n == 0 { 0.0 } else { sum / n as f64 / 1e3 },
            max / 1e3,
        )
    }
}

/// Held while a probe's namespace exists (tests running in parallel probe too).
static PROBE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    /// Party 0's relay to peer 1 listening on the port written for party 2: each address line
    /// still gets its own value (a textual replace of party 2's address rewrote both lines).
    #[test]
    fn each_party_line_gets_its_own_address_even_when_values_repeat() {
        let text = "[ca]\ncert = \"x\"\n[[party]]\naddress = \"127.0.0.1:1\"\n[[party]]\n  address = \"127.0.0.1:2\"\n[[party]]\naddress = \"127.0.0.1:3\"";
        let dial = [
            "127.0.0.1:1".to_string(),
            "127.0.0.1:3".to_string(),
            "127.0.0.1:9".to_string(),
        ];
        let out = with_addresses(text, &dial);
        assert_eq!(party_addresses(&out).unwrap(), dial.to_vec());
        assert!(out.contains("  address = \"127.0.0.1:3\"\n"), "{out}");
        assert!(out.starts_with("[ca]\ncert = \"x\"\n"), "{out}");
        let parties = party_addresses(text).unwrap();
        let l = relay_listener(&parties).unwrap();
        assert!(!parties.contains(&l.local_addr().unwrap().to_string()));
    }

    /// A message through the relay arrives intact, after at least the one-way delay plus its time
    /// on the wire at the profile's rate.
    #[test]
    fn relay_delays_and_limits_the_rate() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("parties.toml");
        std::fs::write(
            &config,
            format!(
                "[[party]]\nindex = 0\naddress = \"127.0.0.1:1\"\n[[party]]\nindex = 1\naddress = \"{addr}\"\n[[party]]\nindex = 2\naddress = \"127.0.0.1:3\"\n"
            ),
        )
        .unwrap();
        let profile = NetProfile {
            name: "test",
            rtt: Duration::from_millis(40),
            bits_per_s: 8e6, // 1 MB/s: 100 kB take 100 ms on the wire
        };
        let relays = Relays::start(&config, profile).unwrap();
        let p0 = std::fs::read_to_string(&relays.configs[0]).unwrap();
        let relay = party_addresses(&p0).unwrap()[1].clone();
        assert_ne!(relay, addr, "party 0 must dial party 1 through the relay");
        let p1 = std::fs::read_to_string(&relays.configs[1]).unwrap();
        assert_eq!(
            party_addresses(&p1).unwrap()[1],
            addr,
            "party 1 listens where it did"
        );

        let payload: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let expect = payload.clone();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut got = vec![0u8; expect.len()];
            s.read_exact(&mut got).unwrap();
            got == expect
        });
        let start = Instant::now();
        let mut c = TcpStream::connect(&relay).unwrap();
        c.write_all(&payload).unwrap();
        assert!(echo.join().unwrap(), "bytes changed in the relay");
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(115),
            "arrived after {took:?}: no delay/rate applied"
        );
        assert!(took < Duration::from_secs(5), "took {took:?}");
        drop(c);
        drop(relays);
    }

    /// The accept loops block in `accept`; dropping the relays wakes them and returns at once,
    /// with and without a connection through them.
    #[test]
    fn relays_stop_promptly() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap().to_string();
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("parties.toml");
        std::fs::write(
            &config,
            format!(
                "[[party]]\nindex = 0\naddress = \"127.0.0.1:1\"\n[[party]]\nindex = 1\naddress = \"{addr}\"\n[[party]]\nindex = 2\naddress = \"127.0.0.1:3\"\n"
            ),
        )
        .unwrap();
        for connect in [false, true] {
            let relays = Relays::start(&config, LAN).unwrap();
            if connect {
                let p0 = std::fs::read_to_string(&relays.configs[0]).unwrap();
                let relay = party_addresses(&p0).unwrap()[1].clone();
                let mut c = TcpStream::connect(&relay).unwrap();
                c.write_all(b"ping").unwrap();
                let (mut s, _) = server.accept().unwrap();
                let mut got = [0u8; 4];
                s.read_exact(&mut got).unwrap();
                assert_eq!(&got, b"ping");
                // Both ends close, as parties do when they exit: the relay's pumps end.
                drop(c);
                drop(s);
            }
            let start = Instant::now();
            drop(relays);
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "relays took {:?} to stop (connected: {connect})",
                start.elapsed()
            );
        }
    }

    #[test]
    fn netem_probe_answers_without_panicking() {
        // Either answer is fine; it must not leave the namespace behind.
        let _ = netem_available();
        // Another test's probe may be under way: list while none is.
        let _quiet = PROBE.lock().unwrap_or_else(|e| e.into_inner());
        let out = std::process::Command::new("ip")
            .args(["netns", "list"])
            .output();
        if let Ok(o) = out {
            let list = String::from_utf8_lossy(&o.stdout);
            assert!(
                !list.contains(&format!("irisc-probe-{}", std::process::id())),
                "{list}"
            );
        }
    }
}
