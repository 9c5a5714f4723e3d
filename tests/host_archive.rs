//! Session ids name a folder of the archive, so they are checked wherever
//! they come from (issue 40): `--session-id ../..` is a usage error, the
//! library refuses the same ids, and the stores refuse any key that would
//! leave the directory or the S3 prefix, so nothing is written outside.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ptc_lisp::history::archive::{validate_session_id, Archive, DirStore, Store, SummaryRecord};
use ptc_lisp::history::config::Config;
use ptc_lisp::history::recorder::Recorder;
use ptc_lisp::history::s3::{S3Location, S3Store};
use ptc_lisp::history::Message;

use crate::util::text;

const BAD: [&str; 7] = ["../..", "..", "a/b", "/etc", ".hidden", "", "a b"];

fn record() -> SummaryRecord {
    SummaryRecord {
        session_id: String::new(),
        step: 0,
        version: None,
        strategy: "digest".into(),
        summarizer: "digest".into(),
        summary: None,
        tokens_before: 10,
        tokens_after: 5,
        pruned_messages: 1,
        note: None,
    }
}

fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

#[test]
fn the_session_id_flag_takes_only_folder_names() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("deep/archive");
    std::fs::create_dir_all(&archive).unwrap();
    let history = dir.path().join("h.jsonl");
    std::fs::write(
        &history,
        "{\"role\": \"user\", \"content\": \"hello\"}\n".repeat(50),
    )
    .unwrap();
    for id in ["../..", "../../escaped", "x/../../y", "..", "/tmp/abs"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptc"))
            .args(["compact", "--manual", "now", "--archive"])
            .arg(&archive)
            .args(["--session-id", id])
            .arg(&history)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{id}");
        assert!(
            text(&out.stderr).contains(&format!(
                "invalid session id `{id}`: use 1 to 128 ASCII letters, digits, `.`, `_` and `-`, not starting with `.`"
            )),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(files_under(dir.path()), vec![history.display().to_string()]);
    // A good id archives under its folder.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(["compact", "--manual", "now", "--archive"])
        .arg(&archive)
        .args(["--session-id", "run-1.a_b"])
        .arg(&history)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(files_under(&archive)
        .iter()
        .all(|f| f.starts_with(&archive.join("run-1.a_b").display().to_string())));
}

#[test]
fn the_library_refuses_the_same_ids_and_keys() {
    for id in BAD {
        assert!(validate_session_id(id).is_err(), "{id:?}");
        assert!(
            Recorder::from_config(&Config::default(), id).is_err(),
            "{id:?}"
        );
    }
    assert!(validate_session_id(&"a".repeat(128)).is_ok());
    assert!(validate_session_id(&"a".repeat(129)).is_err());

    // An archive made with a bad id writes nothing outside its directory.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a/b/archive");
    let messages = vec![Message::user("hello")];
    for id in ["../..", "../x", "/abs"] {
        let mut archive = Archive::new(Box::new(DirStore::new(&root)), id, None);
        let err = archive.save_round(&messages, &record()).unwrap_err();
        assert!(err.contains("would leave the archive"), "{err}");
    }
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
    let mut store = DirStore::new(&root);
    assert!(store.put("../../x", b"no").is_err());
    assert!(store.append("a/../../x", b"no").is_err());
    assert!(store.exists("../x").is_err());
}

#[test]
fn the_s3_store_refuses_keys_outside_its_prefix_before_any_request() {
    // A server that only counts: no request may reach it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    listener.set_nonblocking(true).unwrap();
    let watcher = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if let Ok((stream, _)) = listener.accept() {
                seen.fetch_add(1, Ordering::SeqCst);
                let mut line = String::new();
                let _ = BufReader::new(stream.try_clone().unwrap()).read_line(&mut line);
                let _ = stream.take(0).read(&mut [0]);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    let location = S3Location {
        bucket: "bucket".into(),
        prefix: "team/runs".into(),
        endpoint: Some(endpoint),
        region: "us-east-1".into(),
        encryption: Default::default(),
    };
    let mut store = S3Store::new(location.clone()).unwrap();
    for key in ["../../x", "a/../../b", "/abs", "a//b"] {
        let err = store.put(key, b"no").unwrap_err();
        assert!(err.contains("would leave the archive"), "{err}");
        assert!(store.append(key, b"no").is_err());
        assert!(store.exists(key).is_err());
    }
    let mut archive = Archive::new(Box::new(S3Store::new(location).unwrap()), "../..", None);
    assert!(archive
        .save_round(&[Message::user("hi")], &record())
        .is_err());
    watcher.join().unwrap();
    assert_eq!(requests.load(Ordering::SeqCst), 0);
}
