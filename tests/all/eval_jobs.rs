//! `eval --jobs N`, `--resume` and `--shard I/N`: N tasks in flight against
//! a model server at once, the same results as one at a time; an eval killed
//! mid-way that goes on to the same results as one left alone; shards that
//! `report` merges into the results of one unsharded eval.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    c.env_remove("SWITCHYARD_DATA_DIR");
    c
}

fn run(data: &Path, args: &[&str]) -> Output {
    let out = bin().arg("--data-dir").arg(data).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "it panicked: {err}");
    out
}

fn ok(data: &Path, args: &[&str]) -> String {
    let out = run(data, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of a results file, without the wall-clock time (the one field
/// that may differ between two runs of the same eval).
fn rows(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut rows: Vec<Value> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("wall_ms");
            v
        })
        .collect();
    rows.sort_by_key(|r| (r["setting"].as_str().unwrap().to_string(), r["index"].as_u64().unwrap()));
    rows
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn sample(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-tools").join(rel).display().to_string()
}

#[test]
fn the_same_results_whatever_the_number_of_jobs() {
    let d = tempfile::tempdir().unwrap();
    let (one, four) = (d.path().join("one"), d.path().join("four"));
    let tasks = sample("tasks/sample.toml");
    for (out, jobs) in [(&one, "1"), (&four, "4")] {
        ok(
            d.path(),
            &[
                "eval",
                "--strategy",
                "react,rewoo,atc",
                "--tasks",
                &tasks,
                "--count",
                "24",
                "--jobs",
                jobs,
                "--out",
                out.to_str().unwrap(),
            ],
        );
    }
    // Which tasks' learning each started from differs by design; nothing
    // these strategies learn changes what they do without a budget.
    let strip = |rs: Vec<Value>| -> Vec<Value> {
        rs.into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("learnt_from");
                r
            })
            .collect()
    };
    let (a, b) = (strip(rows(&one)), strip(rows(&four)));
    assert_eq!(a.len(), 72);
    for (x, y) in a.iter().zip(&b) {
        assert!(x == y, "{} task {} differs with 4 jobs", x["setting"], x["index"]);
    }
}

fn without_learnt_from(rs: Vec<Value>) -> Vec<Value> {
    rs.into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("learnt_from");
            r
        })
        .collect()
}

#[test]
fn shards_merged_are_one_unsharded_eval() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let tasks = sample("tasks/sample.toml");
    let eval = |strategy: &str, out: &Path, shard: Option<&str>| {
        let mut args = vec!["eval", "--strategy", strategy, "--tasks", &tasks, "--count", "20", "--out", s(out)];
        args.extend(shard.map(|sh| ["--shard", sh]).into_iter().flatten());
        ok(d.path(), &args);
    };
    eval("react", &p("whole"), None);
    for i in 0..3 {
        eval("react", &p(&format!("s{i}")), Some(&format!("{i}/3")));
    }
    let indices = |rs: &[Value]| rs.iter().map(|r| r["index"].as_u64().unwrap()).collect::<Vec<_>>();
    assert_eq!(indices(&rows(&p("s1"))), vec![1, 4, 7, 10, 13, 16, 19], "shard 1/3 runs tasks 1, 4, 7, …");
    let said = ok(d.path(), &["report", s(&p("s0")), s(&p("s1")), s(&p("s2")), "--out", s(&p("merged"))]);
    assert!(said.contains("merged 3 folders (20 rows)"), "{said}");
    // react learns nothing that changes what it does without a budget, and
    // a task's seed is its place in the whole list: only what each task
    // started learning from differs.
    assert_eq!(without_learnt_from(rows(&p("merged"))), without_learnt_from(rows(&p("whole"))));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(p("merged/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["progress"]["done"], 20);
    assert_eq!(summary["progress"]["expected"], 20);
    assert_eq!(summary["meta"]["merged"].as_array().unwrap().len(), 3);
    let shard: Value = serde_json::from_str(&std::fs::read_to_string(p("s2/summary.json")).unwrap()).unwrap();
    assert_eq!(shard["progress"]["expected"], 6, "a shard expects its own tasks");

    // Another setting over the same tasks merges beside them, and a merge
    // is written again in its place.
    eval("toolnet", &p("toolnet"), None);
    let said = ok(d.path(), &["report", s(&p("merged")), s(&p("toolnet")), "--out", s(&p("both"))]);
    assert!(said.contains("react (k=all)") && said.contains("toolnet"), "{said}");
    ok(d.path(), &["report", s(&p("whole")), s(&p("toolnet")), "--out", s(&p("both"))]);

    // What a merge cannot do, it says.
    let said = ok(d.path(), &["report", s(&p("s0")), s(&p("s1")), "--out", s(&p("part"))]);
    assert!(said.contains("shard 2/3 not merged"), "{said}");
    let fails = |args: &[&str]| {
        let out = run(d.path(), args);
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let copy = p("s0-again");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["eval.json", "results.jsonl"] {
        std::fs::copy(p("s0").join(f), copy.join(f)).unwrap();
    }
    let e = fails(&["report", s(&p("s0")), s(&copy), "--out", s(&p("x"))]);
    assert!(e.contains("both ran shard 0/3"), "{e}");
    let e = fails(&["report", s(&p("s0")), s(&p("whole")), "--out", s(&p("x"))]);
    assert!(e.contains("ran shard 0/1, but") && e.contains("ran 0/3"), "{e}");
    let e = fails(&["report", s(&p("whole")), s(&p("both")), "--out", s(&p("x"))]);
    assert!(e.contains("both hold task 1 of setting 'react (k=all)'"), "{e}");
    let e = fails(&["report", s(&p("s0")), s(&p("s1"))]);
    assert!(e.contains("give --out DIR"), "{e}");
    let e = fails(&["report", s(&p("s0")), s(&p("s1")), "--out", s(&p("s1"))]);
    assert!(e.contains("cannot be one of the folders merged"), "{e}");
    let e = fails(&["report", s(&p("s0")), s(&p("s1")), "--out", s(&p("whole"))]);
    assert!(e.contains("holds an eval of its own"), "{e}");
    let e = fails(&["eval", "--strategy", "react", "--shard", "3/3", "--out", s(&p("y"))]);
    assert!(e.contains("numbered from 0 to 2"), "{e}");
}

fn toolnet(data: &Path, out: &Path, count: &str, jobs: &str) -> Vec<Value> {
    let tasks = sample("tasks/sample.toml");
    ok(
        data,
        &[
            "eval",
            "--strategy",
            "toolnet",
            "--tasks",
            &tasks,
            "--count",
            count,
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    rows(out)
}

#[test]
fn toolnet_with_jobs_commits_what_tasks_learn_in_task_order() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let three = toolnet(d.path(), &p("a"), "30", "3");
    assert_eq!(three, toolnet(d.path(), &p("b"), "30", "3"), "the same seed and jobs give the same rows");
    assert!(three.iter().all(|r| r["learned"]["scores"].as_array().is_some_and(|s| !s.is_empty())));
    for (i, r) in three.iter().enumerate() {
        assert_eq!(r["learnt_from"].as_u64().unwrap() as usize, (i + 1).saturating_sub(3), "task {i}");
    }
    // A task depends on the tasks before it only: the first 12 rows of a
    // 30-task eval are a 12-task eval's.
    assert_eq!(three[..12], toolnet(d.path(), &p("c"), "12", "3")[..]);
    let one = toolnet(d.path(), &p("one"), "30", "1");
    assert_eq!(one[..12], toolnet(d.path(), &p("d"), "12", "1")[..]);
    for (i, r) in one.iter().enumerate() {
        assert_eq!(r["learnt_from"].as_u64().unwrap() as usize, i);
    }
    // What was learnt is what later tasks start from: one at a time, they
    // see more of it, and some take another path for it.
    assert_eq!(one[0], three[0]);
    assert!(one.iter().zip(&three).any(|(a, b)| a["learned"] != b["learned"]));
}

/// An OpenAI-compatible server on loopback whose every reply answers the
/// task at once, and that answers only when `n` requests are waiting
/// together: an eval that sends fewer at a time would wait for ever, so a
/// guard answers 500 after 60 s and the test fails instead of hanging.
struct Gate {
    addr: std::net::SocketAddr,
    most: Arc<Mutex<usize>>,
}

async fn gate(n: usize) -> Gate {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let waiting = Arc::new(Mutex::new(0usize));
    let most = Arc::new(Mutex::new(0usize));
    let (tx, rx) = watch::channel(0u64);
    let tx = Arc::new(tx);
    let m = most.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (waiting, most, tx, rx) = (waiting.clone(), m.clone(), tx.clone(), rx.clone());
            tokio::spawn(async move { answer(stream, n, waiting, most, tx, rx).await });
        }
    });
    Gate { addr, most }
}

async fn answer(
    mut stream: TcpStream,
    n: usize,
    waiting: Arc<Mutex<usize>>,
    most: Arc<Mutex<usize>>,
    tx: Arc<watch::Sender<u64>>,
    mut rx: watch::Receiver<u64>,
) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let len: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < head_end + len {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    }
    let generation = *rx.borrow_and_update();
    {
        let mut w = waiting.lock().unwrap();
        *w += 1;
        let mut m = most.lock().unwrap();
        *m = (*m).max(*w);
        if *w == n {
            *w = 0;
            tx.send_replace(generation + 1);
        }
    }
    let released = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while *rx.borrow() == generation {
            if rx.changed().await.is_err() {
                break;
            }
        }
    })
    .await
    .is_ok();
    let body = if released {
        json!({
            "id": "x", "object": "chat.completion", "created": 0, "model": "gate",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "{\"tool\": \"finish\", \"answer\": \"done\"}"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
        .to_string()
    } else {
        "{\"error\": \"the gate never saw enough requests at once\"}".to_string()
    };
    let status = if released { "200 OK" } else { "500 Gate" };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn remote_config(dir: &Path, addr: std::net::SocketAddr) -> PathBuf {
    let p = dir.join("remote.toml");
    let text = format!(
        "library = [{:?}]\ntasks = {:?}\n[models.remote]\nkind = \"openai\"\nbase_url = \"http://{addr}/v1\"\nmodel = \"m\"\nmax_retries = 0\ntimeout_ms = 120000\n[roles]\nactor = \"remote\"\n",
        sample(""),
        sample("tasks/sample.toml"),
    );
    std::fs::write(&p, text).unwrap();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_put_n_requests_in_flight_and_no_more() {
    let server = gate(4).await;
    let d = tempfile::tempdir().unwrap();
    let cfg = remote_config(d.path(), server.addr);
    let out = d.path().join("out");
    let data = d.path().to_path_buf();
    let args: Vec<String> = [
        "--config",
        cfg.to_str().unwrap(),
        "eval",
        "--strategy",
        "react",
        "--react-k",
        "3",
        "--count",
        "8",
        "--jobs",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let output = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&data, &refs)
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rs = rows(&out);
    assert_eq!(rs.len(), 8);
    assert!(rs.iter().all(|r| r["outcome"] == "answered" && r["answer"] == "done"), "{rs:#?}");
    assert_eq!(*server.most.lock().unwrap(), 4, "4 requests waited together, never more");
}

#[test]
fn an_eval_killed_midway_resumes_to_the_results_of_one_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let tasks = sample("tasks/sample.toml");
    let whole = d.path().join("whole");
    let args = |out: &Path| -> Vec<String> {
        ["eval", "--strategy", "toolnet,react", "--tasks", &tasks, "--count", "300", "--jobs", "2", "--out"]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string()])
            .collect()
    };
    let refs = |v: &[String]| v.iter().map(String::clone).collect::<Vec<_>>();
    let a = refs(&args(&whole));
    ok(d.path(), &a.iter().map(String::as_str).collect::<Vec<_>>());

    let cut = d.path().join("cut");
    let a = refs(&args(&cut));
    let mut child =
        bin().arg("--data-dir").arg(d.path()).args(&a).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let results = cut.join("results.jsonl");
    // Wait for some rows, polling the file the eval appends to; then kill it.
    loop {
        let n = std::fs::read_to_string(&results).map(|t| t.lines().count()).unwrap_or(0);
        if n >= 40 {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the eval ended ({status}) before it could be killed");
        }
        std::thread::yield_now();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&results).unwrap().lines().count();
    assert!(partial < 600, "killed before the end ({partial} rows)");
    // A row cut in half, as a kill mid-write leaves it.
    let mut f = std::fs::OpenOptions::new().append(true).open(&results).unwrap();
    std::io::Write::write_all(&mut f, b"{\"setting\":\"toolnet\",\"strat").unwrap();
    drop(f);

    let mut resumed = a.clone();
    resumed.push("--resume".into());
    let out = run(d.path(), &resumed.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut short"));
    assert_eq!(rows(&cut), rows(&whole), "the resumed eval equals the one left alone");
}

#[test]
fn resume_refuses_a_different_eval_and_a_fresh_eval_refuses_a_used_folder() {
    let d = tempfile::tempdir().unwrap();
    let tasks = sample("tasks/smoke.toml");
    let out = d.path().join("out");
    let o = out.to_str().unwrap();
    ok(d.path(), &["eval", "--strategy", "react", "--tasks", &tasks, "--out", o]);
    let again = run(d.path(), &["eval", "--strategy", "react", "--tasks", &tasks, "--out", o]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
    let other =
        run(d.path(), &["eval", "--strategy", "react", "--tasks", &tasks, "--out", o, "--jobs", "2", "--resume"]);
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("--jobs"), "{err}");
    // Nothing to do: every task is there; the table is printed again.
    let same = ok(d.path(), &["eval", "--strategy", "react", "--tasks", &tasks, "--out", o, "--resume"]);
    assert!(same.contains("react"), "{same}");
}

#[test]
fn a_label_names_the_one_setting_of_an_eval() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mine");
    ok(d.path(), &["eval", "--strategy", "react", "--count", "2", "--label", "my agent", "--out", s(&out)]);
    assert!(rows(&out).iter().all(|r| r["setting"] == "my agent"));
    let said = run(d.path(), &["eval", "--strategy", "react,toolnet", "--label", "x", "--out", s(&d.path().join("y"))]);
    assert!(!said.status.success());
    let e = String::from_utf8_lossy(&said.stderr);
    assert!(e.contains("--label names one setting; this eval compares 2"), "{e}");
}
