//! The TLS links for party counts other than three (the three-party behaviour is covered in
//! `tests/net_tls.rs`), on loopback with one thread per party.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};

use super::{tell_peers_we_stop, SetupError, TlsTransport};
use crate::net::session::{Session, PROGRAM};
use crate::net::{NetError, PartiesConfig, Transport};

const TIMEOUT: Duration = Duration::from_secs(2);
/// How much later than the configured bound a failure may surface (thread start-up, lingering).
const SLACK: Duration = Duration::from_secs(3);

/// A directory with a CA, `n` party certificates and a `parties.toml` for them (2 s timeout).
struct Pki {
    _dir: tempfile::TempDir,
    cfg: PartiesConfig,
}

impl Pki {
    fn new(n: usize) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca = CertificateParams::default();
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign];
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        std::fs::write(dir.path().join("ca.crt"), ca_cert.pem()).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        for i in 0..n {
            let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
            let mut p = CertificateParams::new(vec![format!("party{i}.irisc")]).unwrap();
            p.extended_key_usages = vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ];
            let cert = p.signed_by(&key, &issuer).unwrap();
            std::fs::write(dir.path().join(format!("party{i}.crt")), cert.pem()).unwrap();
            write_private(
                &dir.path().join(format!("party{i}.key")),
                key.serialize_pem().as_bytes(),
            );
        }
        // Hold every listener until all ports are picked, so no two parties get the same one.
        let listeners: Vec<_> = (0..n)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        let mut toml = format!("timeout_secs = {}\nca = \"ca.crt\"\n", TIMEOUT.as_secs());
        for (i, l) in listeners.iter().enumerate() {
            let port = l.local_addr().unwrap().port();
            toml.push_str(&format!(
                "[[party]]\nindex = {i}\naddress = \"127.0.0.1:{port}\"\ncert = \"party{i}.crt\"\nkey = \"party{i}.key\"\n"
            ));
        }
        drop(listeners);
        let path = dir.path().join("parties.toml");
        std::fs::write(&path, toml).unwrap();
        let cfg = PartiesConfig::load(&path).unwrap();
        assert_eq!(cfg.count(), n);
        Pki { _dir: dir, cfg }
    }
}

fn write_private(path: &Path, bytes: &[u8]) {
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).unwrap().write_all(bytes).unwrap();
}

/// Runs `f(party, config)` for every party of `cfg` at once, each on its own thread; the results
/// in party order.
fn run_all<R: Send + 'static>(
    cfg: &PartiesConfig,
    f: impl Fn(usize, PartiesConfig) -> R + Send + Sync + Clone + 'static,
) -> Vec<R> {
    let handles: Vec<_> = (0..cfg.count())
        .map(|me| {
            let (f, cfg) = (f.clone(), cfg.clone());
            std::thread::spawn(move || f(me, cfg))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("party thread panicked"))
        .collect()
}

/// Connects every party with its own session bytes; each one's setup result and how long it
/// took.
fn setup_all(cfg: &PartiesConfig, sessions: Vec<Vec<u8>>) -> Vec<(Result<(), String>, Duration)> {
    run_all(cfg, move |me, cfg| {
        let start = Instant::now();
        let r = TlsTransport::connect(&cfg, me, &sessions[me]);
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

/// Every party sends to every other one (small, empty and 4 MiB messages, all before anyone
/// receives), then receives in another order than it sent.
fn exchange(n: usize) {
    let pki = Pki::new(n);
    let mut cfg = pki.cfg.clone();
    // Building and checking the payloads in an unoptimised test takes a while.
    cfg.timeout = Duration::from_secs(30);
    const BIG: usize = 4 << 20;
    let results = run_all(&cfg, move |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"program|shares").expect("connect");
        assert_eq!((t.party(), t.parties()), (me, n));
        assert_eq!(t.next(), (me + 1) % n);
        assert_eq!(t.prev(), (me + n - 1) % n);
        let peers: Vec<usize> = (0..n).filter(|&j| j != me).collect();
        for &to in &peers {
            t.send(to, format!("hello {to} from {me}").into_bytes())
                .unwrap();
            t.send(to, Vec::new()).unwrap();
            t.send(to, vec![(me * n + to) as u8; BIG]).unwrap();
        }
        for &from in peers.iter().rev() {
            assert_eq!(
                t.recv(from).unwrap(),
                format!("hello {me} from {from}").into_bytes()
            );
            assert_eq!(t.recv(from).unwrap(), Vec::<u8>::new());
            let big = t.recv(from).unwrap();
            assert!(big.len() == BIG && big.iter().all(|&b| b == (from * n + me) as u8));
        }
        assert_eq!(t.messages_sent(), 3 * (n as u64 - 1));
        // One more round along the ring: `next` and `prev` pair up.
        t.send(t.next(), b"ring".to_vec()).unwrap();
        assert_eq!(t.recv(t.prev()).unwrap(), b"ring");
        // A party outside the run is refused, not indexed.
        assert!(matches!(t.send(n, vec![1]), Err(NetError::Io { peer, .. }) if peer == n));
        t.close().unwrap();
    });
    assert_eq!(results.len(), n);
}

#[test]
fn two_parties_connect_and_exchange() {
    exchange(2);
}

#[test]
fn three_and_four_parties_connect_and_exchange() {
    exchange(3);
    exchange(4);
}

#[test]
fn two_party_session_mismatch_is_named_plainly() {
    let pki = Pki::new(2);
    let session = |chunk: usize| {
        Session::new()
            .field(PROGRAM, "p abc")
            .field("--chunk-size", chunk)
            .to_bytes()
    };
    let results = setup_all(&pki.cfg, vec![session(4096), session(1024)]);
    eprintln!("{results:#?}");
    assert_all_fail_in_time(&results);
    // With two parties neither is "the odd one": each names the setting and both values.
    assert_eq!(
        results[0].0.as_ref().unwrap_err(),
        "the parties must agree on --chunk-size, but party 0 has 4096 and party 1 has 1024"
    );
    assert_eq!(
        results[1].0.as_ref().unwrap_err(),
        "the parties must agree on --chunk-size, but party 1 has 1024 and party 0 has 4096"
    );

    // Session bytes of another form are compared whole.
    let results = setup_all(&pki.cfg, vec![b"prog-A".to_vec(), b"prog-B".to_vec()]);
    assert_all_fail_in_time(&results);
    for (me, (r, _)) in results.iter().enumerate() {
        let e = r.as_ref().unwrap_err();
        assert!(
            e.contains(&format!(
                "party {} runs another program or other share files",
                1 - me
            )),
            "party {me}: {e}"
        );
    }
}

#[test]
fn two_party_program_mismatch_speaks_of_both_parties() {
    let pki = Pki::new(2);
    let program = |p: &str| Session::new().field(PROGRAM, p).to_bytes();
    let results = setup_all(&pki.cfg, vec![program("a"), program("b")]);
    assert_all_fail_in_time(&results);
    let e = results[0].0.as_ref().unwrap_err();
    assert_eq!(
        e,
        "party 1 runs another program (b) than party 0 (a): both parties must run executables built from the same program"
    );
}

#[test]
fn two_party_peer_that_dies_reads_as_closed_at_once() {
    let pki = Pki::new(2);
    let results = run_all(&pki.cfg, |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        let peer = t.next();
        t.send(peer, vec![1, 2, 3]).unwrap();
        assert_eq!(t.recv(peer).unwrap(), vec![1, 2, 3]);
        if me == 1 {
            // Crash-like: drop the transport without a second round.
            drop(t);
            return None;
        }
        let start = Instant::now();
        let r = t.recv(1);
        Some((r, start.elapsed()))
    });
    let (r, took) = results[0].as_ref().unwrap();
    assert!(matches!(r, Err(NetError::Closed { peer: 1 })), "{r:?}");
    assert!(
        *took < TIMEOUT,
        "noticed the closed link only after {took:?}"
    );
    let msg = r.as_ref().unwrap_err().to_string();
    assert_eq!(msg, "party 1 closed its link (it stopped or was killed)");
}

#[test]
fn two_party_silent_peer_times_out_within_the_bound() {
    let pki = Pki::new(2);
    let results = run_all(&pki.cfg, |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        if me == 1 {
            // Connected but silent until party 0 gave up.
            std::thread::sleep(TIMEOUT + Duration::from_millis(500));
            // Party 0 may have gone already: only its timeout is under test.
            let _ = t.close();
            return None;
        }
        let start = Instant::now();
        let r = t.recv(1);
        Some((r, start.elapsed()))
    });
    let (r, took) = results[0].as_ref().unwrap();
    assert!(
        matches!(r, Err(NetError::Timeout { peer: 1, waited }) if *waited == TIMEOUT),
        "{r:?}"
    );
    assert!(
        *took >= TIMEOUT - Duration::from_millis(100) && *took < TIMEOUT + SLACK,
        "{took:?}"
    );
}

#[test]
fn two_party_abort_frame_is_reported_at_once() {
    let pki = Pki::new(2);
    let mut cfg = pki.cfg.clone();
    // A receive timeout far above the bound below: the abort, not the timeout, ends the wait.
    cfg.timeout = Duration::from_secs(30);
    let results = run_all(&cfg, |me, cfg| {
        let mut t = TlsTransport::connect(&cfg, me, b"s").expect("connect");
        if me == 1 {
            t.abort("party 1 could not write its output", Duration::from_secs(2));
            // Still running: the peer must not need the link to close.
            std::thread::sleep(Duration::from_secs(3));
            return None;
        }
        let start = Instant::now();
        let r = t.recv(1);
        Some((r, start.elapsed()))
    });
    let (r, took) = results[0].as_ref().unwrap();
    let e = r.as_ref().unwrap_err();
    assert_eq!(
        e.to_string(),
        "party 1 stopped: party 1 could not write its output"
    );
    assert!(*took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn two_party_peer_that_stops_before_joining_is_reported_at_once() {
    let pki = Pki::new(2);
    let results = run_all(&pki.cfg, |me, cfg| {
        let start = Instant::now();
        if me == 1 {
            tell_peers_we_stop(&cfg, 1, "party 1 cannot read its inputs", TIMEOUT);
            return None;
        }
        let r = TlsTransport::connect(&cfg, 0, b"s").map(|_| ());
        Some((r, start.elapsed()))
    });
    let (r, took) = results[0].as_ref().unwrap();
    let e = r.as_ref().unwrap_err();
    assert!(
        matches!(e, SetupError::PeerStopped { peer: 1, .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "party 1 stopped: party 1 cannot read its inputs"
    );
    assert!(*took < TIMEOUT, "took {took:?}");
}

#[test]
fn two_party_missing_peer_fails_within_the_bound() {
    let pki = Pki::new(2);
    let start = Instant::now();
    let err = TlsTransport::connect(&pki.cfg, 1, b"s").unwrap_err();
    assert!(start.elapsed() < TIMEOUT + SLACK);
    match &err {
        SetupError::Unreachable { peer: 0, .. } => {
            let addr = &pki.cfg.parties[0].address;
            assert_eq!(
                err.to_string(),
                format!("could not reach party 0 at {addr} within 2 s: connection refused")
            );
        }
        SetupError::NoIncoming { peer: 0, .. } => {}
        other => panic!("{other}"),
    }
}

#[test]
fn a_party_index_outside_the_run_is_refused() {
    let pki = Pki::new(2);
    let e = TlsTransport::connect(&pki.cfg, 2, b"s").unwrap_err();
    assert!(
        matches!(e, SetupError::BadParty { me: 2, parties: 2 }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "party index 2 is out of range (parties are 0 and 1)"
    );
}

/// Serving parties reconnect with [`TlsTransport::rejoin`]: their attempts start at different
/// times and a peer may start over while the links form. Here party 2 restarts after
/// connecting (drops its links before the round's exchange, then rejoins at once) in two of the
/// rounds, and the parties' attempt bounds differ, so their attempts never line up; every
/// round still ends with all three linked and every message from the round's own links.
#[test]
fn rejoining_parties_converge_while_one_keeps_restarting() {
    let pki = Pki::new(3);
    const ROUNDS: u8 = 5;
    let started = Instant::now();
    let results = run_all(&pki.cfg, move |me, mut cfg| {
        cfg.timeout = Duration::from_millis([1500, 2300, 3100][me]);
        let mut restarts = 0;
        let mut attempts = 0;
        let mut round = 0u8;
        while round < ROUNDS {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "party {me} is still not linked in round {round} after {attempts} attempts"
            );
            attempts += 1;
            let Ok(mut t) = TlsTransport::rejoin(&cfg, me, b"serving", &Default::default()) else {
                continue;
            };
            if me == 2 && (round == 1 || round == 3) && restarts < round {
                restarts = round;
                drop(t);
                continue;
            }
            let peers = [(me + 1) % 3, (me + 2) % 3];
            let sent = peers
                .iter()
                .all(|&p| t.send(p, vec![round, me as u8]).is_ok());
            let got: Vec<_> = peers.iter().map(|&p| t.recv(p)).collect();
            if !sent || got.iter().any(Result::is_err) {
                continue;
            }
            for (p, m) in peers.iter().zip(got) {
                assert_eq!(m.unwrap(), vec![round, *p as u8], "party {me} from {p}");
            }
            // Every party takes the round's messages before anyone goes on.
            std::thread::sleep(Duration::from_millis(100));
            round += 1;
        }
        attempts
    });
    assert!(results.iter().all(|&a| a >= ROUNDS as usize), "{results:?}");
}
