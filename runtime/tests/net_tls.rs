//! The TLS links between the three parties, exercised on loopback with one thread per party.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use irisc_runtime::net::{
    ConfigError, NetError, PartiesConfig, SetupError, TlsSetupError, TlsTransport, Transport,
};
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};

const TIMEOUT: Duration = Duration::from_secs(2);
/// How much later than the configured bound a failure may surface (thread start-up, lingering).
const SLACK: Duration = Duration::from_secs(3);

/// Certificates of one CA for the three parties, written into `dir` with the given file prefix.
fn write_pki(dir: &Path, prefix: &str) -> [(PathBuf, PathBuf); 3] {
    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    std::fs::write(dir.join(format!("{prefix}ca.crt")), ca_cert.pem()).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    std::array::from_fn(|i| {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = CertificateParams::new(vec![format!("party{i}.irisc")]).unwrap();
        p.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = p.signed_by(&key, &issuer).unwrap();
        let cert_path = dir.join(format!("{prefix}party{i}.crt"));
        let key_path = dir.join(format!("{prefix}party{i}.key"));
        std::fs::write(&cert_path, cert.pem()).unwrap();
        write_private(&key_path, key.serialize_pem().as_bytes());
        (cert_path, key_path)
    })
}

fn write_private(path: &Path, bytes: &[u8]) {
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).unwrap().write_all(bytes).unwrap();
}

fn free_ports() -> [u16; 3] {
    let ls: Vec<_> = (0..3)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    std::array::from_fn(|i| ls[i].local_addr().unwrap().port())
}

/// A directory with a CA, three party certificates and a `parties.toml` (2 s timeout).
struct Setup {
    dir: tempfile::TempDir,
    toml: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        write_pki(dir.path(), "");
        let ports = free_ports();
        let mut toml = format!("timeout_secs = {}\nca = \"ca.crt\"\n", TIMEOUT.as_secs());
        for (i, port) in ports.iter().enumerate() {
            toml.push_str(&format!(
                "[[party]]\nindex = {i}\naddress = \"127.0.0.1:{port}\"\ncert = \"party{i}.crt\"\nkey = \"party{i}.key\"\n"
            ));
        }
        let path = dir.path().join("parties.toml");
        std::fs::write(&path, toml).unwrap();
        Setup { dir, toml: path }
    }

    fn config(&self) -> PartiesConfig {
        PartiesConfig::load(&self.toml).unwrap()
    }
}

/// Runs `f(party, config)` for the three parties at once, each on its own thread, with per-party
/// configurations (so one party can be misconfigured).
fn run_three<R: Send + 'static>(
    cfgs: [PartiesConfig; 3],
    f: impl Fn(usize, PartiesConfig) -> R + Send + Sync + Clone + 'static,
) -> Vec<R> {
    let handles: Vec<_> = cfgs
        .into_iter()
        .enumerate()
        .map(|(me, cfg)| {
            let f = f.clone();
            std::thread::spawn(move || f(me, cfg))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("party thread panicked"))
        .collect()
}

/// A payload that differs per direction and marks its position every 4093 bytes, so a lost,
/// repeated or reordered chunk is noticed (cheap to build in an unoptimised test).
fn pattern(me: usize, to: usize, len: usize) -> Vec<u8> {
    let mut v = vec![(me * 3 + to) as u8; len];
    for (n, k) in (0..len).step_by(4093).enumerate() {
        v[k] = (n % 251) as u8;
    }
    v
}

#[test]
fn exchange_both_ways_and_64_mib_from_everyone_at_once() {
    let s = Setup::new();
    let mut cfg = s.config();
    // Building and checking 64 MiB payloads in an unoptimised test takes a while; the bound on
    // receives is exercised elsewhere.
    cfg.timeout = Duration::from_secs(60);
    let results = run_three([cfg.clone(), cfg.clone(), cfg], |me, cfg| {
        let mut t =
            TlsTransport::connect(&cfg, me, b"program-fingerprint|share-set-7").expect("connect");
        assert_eq!(t.party(), me);
        // Small messages both ways, several in a row, including an empty one.
        for to in [t.next(), t.prev()] {
            t.send(to, format!("hello {to} from {me}").into_bytes())
                .unwrap();
            t.send(to, Vec::new()).unwrap();
            t.send(to, vec![me as u8; 100_000]).unwrap();
        }
        for from in [t.prev(), t.next()] {
            assert_eq!(
                t.recv(from).unwrap(),
                format!("hello {me} from {from}").into_bytes()
            );
            assert_eq!(t.recv(from).unwrap(), Vec::<u8>::new());
            assert_eq!(t.recv(from).unwrap(), vec![from as u8; 100_000]);
        }
        // Everyone sends 64 MiB to both others before anyone receives: a transport whose send
        // waited for the peer to read would deadlock here.
        const BIG: usize = 64 << 20;
        let payloads = [pattern(me, t.next(), BIG), pattern(me, t.prev(), BIG)];
        let start = Instant::now();
        for (to, p) in [t.next(), t.prev()].into_iter().zip(payloads) {
            t.send(to, p).unwrap();
        }
        let mut got = Vec::new();
        for from in [t.next(), t.prev()] {
            got.push((from, t.recv(from).unwrap()));
        }
        let took = start.elapsed();
        for (from, g) in got {
            assert_eq!(g.len(), BIG);
            assert!(
                g == pattern(from, me, BIG),
                "party {me}: 64 MiB from {from} corrupted"
            );
        }
        assert_eq!(t.messages_sent(), 8);
        assert_eq!(
            t.bytes_sent(),
            2 * (BIG as u64 + 100_000 + format!("hello x from {me}").len() as u64)
        );
        // A final round after the big one: links still in order.
        t.send(t.next(), b"bye".to_vec()).unwrap();
        assert_eq!(t.recv(t.prev()).unwrap(), b"bye");
        t.close().unwrap();
        took
    });
    eprintln!("64 MiB exchange took {results:?}");
}

/// Connects the three parties with the given configurations and returns each one's setup result
/// and how long it took.
fn setup_three(
    cfgs: [PartiesConfig; 3],
    sessions: [&'static [u8]; 3],
) -> Vec<(Result<(), String>, Duration)> {
    run_three(cfgs, move |me, cfg| {
        let start = Instant::now();
        let r = TlsTransport::connect(&cfg, me, sessions[me]);
        let took = start.elapsed();
        let r = match r {
            // Keep it open briefly so the others finish their checks against a live party.
            Ok(t) => {
                std::thread::sleep(Duration::from_millis(200));
                drop(t);
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        };
        (r, took)
    })
}

fn assert_all_fail_in_time(results: &[(Result<(), String>, Duration)]) {
    for (me, (r, took)) in results.iter().enumerate() {
        assert!(r.is_err(), "party {me} should have failed, got {r:?}");
        assert!(
            *took < TIMEOUT + SLACK,
            "party {me} took {took:?} to fail: {r:?}"
        );
    }
}

#[test]
fn certificate_from_another_ca_fails_everywhere() {
    let s = Setup::new();
    let foreign = write_pki(s.dir.path(), "other-");
    let good = s.config();
    let mut bad = good.clone();
    bad.parties[1].cert = foreign[1].0.clone();
    bad.parties[1].key = foreign[1].1.clone();
    // Party 1 trusts the right CA but holds a certificate the others' CA never signed.
    let results = setup_three([good.clone(), bad, good], [b"s", b"s", b"s"]);
    eprintln!("{results:#?}");
    assert_all_fail_in_time(&results);
    let e1 = results[1].0.as_ref().unwrap_err();
    assert!(e1.contains("rejected this party's certificate"), "{e1}");
    // The others name party 1 (how precisely depends on how far party 1 got with them before
    // it gave up; party 1 itself has the precise diagnosis).
    for me in [0, 2] {
        let e = results[me].0.as_ref().unwrap_err();
        assert!(e.contains("party 1"), "party {me}: {e}");
    }
}

#[test]
fn another_partys_certificate_fails_everywhere() {
    let s = Setup::new();
    let good = s.config();
    let mut bad = good.clone();
    // Party 1 is started with party 2's certificate and key.
    bad.parties[1].cert = good.parties[2].cert.clone();
    bad.parties[1].key = good.parties[2].key.clone();
    let results = setup_three([good.clone(), bad, good], [b"s", b"s", b"s"]);
    eprintln!("{results:#?}");
    assert_all_fail_in_time(&results);
    // Parties 0 and 2 blame party 1 (how precisely depends on which of party 1's connections
    // they saw before it gave up).
    for me in [0, 2] {
        let e = results[me].0.as_ref().unwrap_err();
        assert!(e.contains("party 1"), "party {me}: {e}");
    }
    let e1 = results[1].0.as_ref().unwrap_err();
    assert!(e1.contains("certificate"), "{e1}");
}

#[test]
fn different_session_bytes_are_refused() {
    let s = Setup::new();
    let cfg = s.config();
    let results = setup_three(
        [cfg.clone(), cfg.clone(), cfg],
        [b"prog-A|shares-1", b"prog-A|shares-1", b"prog-B|shares-1"],
    );
    eprintln!("{results:#?}");
    assert_all_fail_in_time(&results);
    for me in [0, 1] {
        let e = results[me].0.as_ref().unwrap_err();
        assert!(
            e.contains("party 2 runs another program or other share files"),
            "party {me}: {e}"
        );
    }
    let e2 = results[2].0.as_ref().unwrap_err();
    assert!(
        e2.contains("runs another program or other share files"),
        "{e2}"
    );
}

#[test]
fn missing_peer_is_reported_with_its_address() {
    let s = Setup::new();
    let cfg = s.config();
    let start = Instant::now();
    let err = TlsTransport::connect(&cfg, 0, b"s").unwrap_err();
    assert!(start.elapsed() < TIMEOUT + SLACK);
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            SetupError::Unreachable { .. } | SetupError::NoIncoming { .. }
        ),
        "{msg}"
    );
    if let SetupError::Unreachable { peer, .. } = err {
        let addr = &cfg.parties[peer].address;
        assert_eq!(
            msg,
            format!("could not reach party {peer} at {addr} within 2 s: connection refused")
        );
    }
}

#[test]
fn dropped_peer_reads_as_closed() {
    let s = Setup::new();
    let cfg = s.config();
    let results = run_three([cfg.clone(), cfg.clone(), cfg], |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        for to in [t.next(), t.prev()] {
            t.send(to, vec![1, 2, 3]).unwrap();
        }
        for from in [t.next(), t.prev()] {
            assert_eq!(t.recv(from).unwrap(), vec![1, 2, 3]);
        }
        if me == 2 {
            // Crash-like: drop the transport without a second round.
            drop(t);
            return None;
        }
        let start = Instant::now();
        let r = t.recv(2);
        Some((r, start.elapsed()))
    });
    for me in [0, 1] {
        let (r, took) = results[me].as_ref().unwrap();
        assert!(
            matches!(r, Err(NetError::Closed { peer: 2 })),
            "party {me}: {r:?}"
        );
        assert!(
            *took < TIMEOUT,
            "party {me} noticed the closed link only after {took:?}"
        );
        let msg = r.as_ref().unwrap_err().to_string();
        assert!(msg.contains("party 2 closed its link"), "{msg}");
    }
}

#[test]
fn silent_peer_times_out_within_the_bound() {
    let s = Setup::new();
    let cfg = s.config();
    let gave_up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let results = run_three([cfg.clone(), cfg.clone(), cfg], move |me, cfg| {
        use std::sync::atomic::Ordering;
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        if me == 2 {
            // Stay connected but say nothing until party 0 has given up waiting, then speak.
            let start = Instant::now();
            while !gave_up.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(10));
            }
            t.send(0, b"late".to_vec()).unwrap();
            t.close().unwrap();
            return None;
        }
        if me == 1 {
            t.send(0, b"ok".to_vec()).unwrap();
            t.close().unwrap();
            return None;
        }
        assert_eq!(t.recv(1).unwrap(), b"ok");
        let start = Instant::now();
        let r = t.recv(2);
        let took = start.elapsed();
        gave_up.store(true, Ordering::SeqCst);
        // A timeout is not fatal: the link still delivers what comes later.
        let again = t.recv(2);
        Some((r, took, again))
    });
    let (r, took, again) = results[0].as_ref().unwrap();
    assert!(
        matches!(r, Err(NetError::Timeout { peer: 2, waited }) if *waited == TIMEOUT),
        "{r:?}"
    );
    assert!(
        *took >= TIMEOUT - Duration::from_millis(100) && *took < TIMEOUT + SLACK,
        "{took:?}"
    );
    assert_eq!(again.as_ref().unwrap(), b"late");
    assert!(r
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("party 2 sent nothing for 2s"));
}

#[test]
fn send_to_dead_peer_is_reported_not_hung() {
    let s = Setup::new();
    let cfg = s.config();
    let results = run_three([cfg.clone(), cfg.clone(), cfg], |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        if me != 0 {
            drop(t);
            return None;
        }
        // Keep sending into links whose readers are gone: some call must report it.
        let start = Instant::now();
        let mut err = None;
        while start.elapsed() < TIMEOUT + SLACK {
            if let Err(e) = t.send(1, vec![0; 1 << 20]) {
                err = Some(e);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let closed = t.close();
        Some((err, closed))
    });
    let (err, closed) = results[0].as_ref().unwrap();
    assert!(matches!(err, Some(NetError::Closed { peer: 1 })), "{err:?}");
    assert!(closed.is_err());
}

#[test]
fn config_errors_are_clear() {
    let s = Setup::new();
    let dir = s.dir.path();

    let missing = PartiesConfig::load(&dir.join("nope.toml")).unwrap_err();
    assert!(matches!(missing, ConfigError::Read { .. }));
    assert!(missing.to_string().contains("nope.toml"), "{missing}");

    let broken = dir.join("broken.toml");
    std::fs::write(
        &broken,
        "timeout_secs = 2\nca = \"ca.crt\"\n[[party]\nindex = 0\n",
    )
    .unwrap();
    let e = PartiesConfig::load(&broken).unwrap_err().to_string();
    assert!(e.contains("broken.toml") && e.contains("line 3"), "{e}");

    // Two entries are a (two-party) run; one is not.
    let one = dir.join("one.toml");
    let text = std::fs::read_to_string(&s.toml).unwrap();
    let cut = text.match_indices("[[party]]").nth(1).unwrap().0;
    std::fs::write(&one, &text[..cut]).unwrap();
    let e = PartiesConfig::load(&one).unwrap_err().to_string();
    assert!(
        e.contains("found 1 [[party]] entry; a run has 2 to 8 parties"),
        "{e}"
    );

    // A key other users can read is refused before any connection is made.
    let cfg = s.config();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cfg.parties[0].key, std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let e = TlsTransport::connect(&cfg, 0, b"s").unwrap_err();
        assert!(
            matches!(
                e,
                SetupError::Tls(TlsSetupError::Config(ConfigError::KeyPermissions { .. }))
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("party0.key is accessible by other users"),
            "{msg}"
        );
        assert!(msg.contains("chmod 600"), "{msg}");
    }

    // A key that does not match the certificate is caught while loading.
    let mut mixed = s.config();
    mixed.parties[1].key = mixed.parties[2].key.clone();
    let e = TlsTransport::connect(&mixed, 1, b"s")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("party 1") && e.contains("do not belong together"),
        "{e}"
    );

    // A party index outside 0..3.
    let e = TlsTransport::connect(&cfg, 3, b"s").unwrap_err();
    assert!(matches!(e, SetupError::BadParty { me: 3, parties: 3 }));
}

#[test]
fn an_abort_frame_is_reported_at_once_while_waiting_on_the_other_peer() {
    let s = Setup::new();
    let mut cfg = s.config();
    // A receive timeout far above the bound below: the abort, not the timeout, ends the waits.
    cfg.timeout = Duration::from_secs(30);
    let results = run_three([cfg.clone(), cfg.clone(), cfg], |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        if me == 2 {
            t.abort("party 2 could not write its output", Duration::from_secs(2));
            // Still running: the others must not need the link to close.
            std::thread::sleep(Duration::from_secs(3));
            return None;
        }
        // Wait on the other survivor, which sends nothing.
        let other = 1 - me;
        let start = Instant::now();
        let r = t.recv(other);
        let took = start.elapsed();
        // Keep the links open until the other survivor has heard the abort too.
        std::thread::sleep(Duration::from_secs(2));
        Some((r, took))
    });
    for me in [0, 1] {
        let (r, took) = results[me].as_ref().unwrap();
        let e = r.as_ref().unwrap_err();
        assert!(
            matches!(e, NetError::Aborted { peer: 2, reason } if reason == "party 2 could not write its output"),
            "party {me}: {e:?}"
        );
        assert_eq!(
            e.to_string(),
            "party 2 stopped: party 2 could not write its output"
        );
        assert!(*took < Duration::from_secs(2), "party {me} took {took:?}");
    }
}
