//! `chaos`: the load and the measure of `deploy/chaos.sh`. It drives every feature of the
//! replicas through nginx at once (stateless and 2025-11-25 calls, tasks of both versions,
//! kept results, a rate-limited tool, gateway input rounds, listen streams), injects the
//! faults in turn by running the control command, and reports per fault the errors the
//! clients saw, what was lost or doubled, and the time to recover.
//!
//! ```text
//! chaos --url URL --control CMD [--fault NAME:SECONDS]… [--skip NAME:WHY]… [--baseline S]
//!       [--settle S] [--window S] [--timeout S] [--rate-limit L] [--task-deadline S] [--trace FILE]
//! ```
//!
//! For each fault: `CMD inject NAME`, SECONDS later `CMD heal NAME`, then `--settle` seconds
//! of load before the next one. Recovery is measured from the end of `heal`, in windows of
//! `--window` seconds, by the operations started in each. Exits 1 when anything was lost or
//! doubled (or nothing ever succeeded), 2 on bad arguments.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::JoinSet;

mod http;
mod load;
mod record;
mod report;

use load::{CLASSES, Load};
use record::Record;
use report::{Phase, Run};

struct Args {
    url: String,
    control: String,
    faults: Vec<(String, f64)>,
    skipped: Vec<(String, String)>,
    baseline: f64,
    settle: f64,
    window: f64,
    timeout: f64,
    rate_limit: u32,
    task_deadline: f64,
    /// Where to write every operation that did not succeed (TSV), if anywhere.
    trace: Option<String>,
}

fn usage(message: &str) -> ! {
    eprintln!(
        "chaos: {message}\nusage: chaos --url URL --control CMD [--fault NAME:SECONDS]… [--skip NAME:WHY]… [--baseline S] [--settle S] [--window S] [--timeout S] [--rate-limit L] [--task-deadline S] [--trace FILE]"
    );
    std::process::exit(2)
}

fn parse() -> Args {
    let mut args = Args {
        url: String::new(),
        control: String::new(),
        faults: Vec::new(),
        skipped: Vec::new(),
        baseline: 10.0,
        settle: 20.0,
        window: 1.0,
        timeout: 10.0,
        rate_limit: 20,
        task_deadline: 30.0,
        trace: None,
    };
    let given: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < given.len() {
        let flag = given[i].as_str();
        let Some(value) = given.get(i + 1).cloned() else {
            usage(&format!("`{flag}` needs a value"))
        };
        let seconds = || -> f64 {
            value
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .unwrap_or_else(|| usage(&format!("`{flag} {value}`: not a number of seconds")))
        };
        match flag {
            "--url" => args.url = value.clone(),
            "--control" => args.control = value.clone(),
            "--trace" => args.trace = Some(value.clone()),
            "--fault" => {
                let Some((name, s)) = value.split_once(':') else {
                    usage("`--fault` takes NAME:SECONDS")
                };
                let s = s
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .unwrap_or_else(|| usage("`--fault` takes NAME:SECONDS"));
                args.faults.push((name.to_owned(), s));
            }
            "--skip" => {
                let (name, why) = value.split_once(':').unwrap_or((value.as_str(), ""));
                args.skipped.push((name.to_owned(), why.trim().to_owned()));
            }
            "--baseline" => args.baseline = seconds(),
            "--settle" => args.settle = seconds(),
            "--window" => args.window = seconds().max(0.1),
            "--timeout" => args.timeout = seconds().max(0.5),
            "--task-deadline" => args.task_deadline = seconds(),
            "--rate-limit" => {
                args.rate_limit = value
                    .parse()
                    .ok()
                    .filter(|l| *l > 0)
                    .unwrap_or_else(|| usage("`--rate-limit` takes calls a second"));
            }
            other => usage(&format!("unknown option `{other}`")),
        }
        i += 2;
    }
    if args.url.is_empty() || args.control.is_empty() {
        usage("`--url` and `--control` are needed");
    }
    args
}

/// Runs `CONTROL ACTION NAME`; its output goes to ours (stderr).
async fn control(command: &str, action: &str, name: &str) -> Result<(), String> {
    let status = tokio::process::Command::new(command)
        .arg(action)
        .arg(name)
        .stdout(std::process::Stdio::inherit())
        .status()
        .await
        .map_err(|e| format!("`{command} {action} {name}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{command} {action} {name}` failed ({status})"))
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[tokio::main]
async fn main() {
    let args = parse();
    let endpoint = http::Endpoint::new(&args.url, secs(args.timeout)).unwrap_or_else(|e| usage(&e));
    let record = Arc::new(Record::new());
    let load = Arc::new(Load {
        endpoint,
        record: record.clone(),
        running: true.into(),
        pace: Duration::from_millis(20),
        rate_limit: args.rate_limit,
        task_deadline: secs(args.task_deadline),
        next_id: 1.into(),
    });
    let mut clients = JoinSet::new();
    load::start(&load, &mut clients);

    // Warm-up: every class served once (the mounts connected, the streams acknowledged).
    let ready = tokio::time::Instant::now() + Duration::from_secs(30);
    while !CLASSES.iter().all(|c| record.succeeded(c)) {
        if tokio::time::Instant::now() > ready {
            let missing: Vec<&str> = CLASSES
                .iter()
                .copied()
                .filter(|c| !record.succeeded(c))
                .collect();
            eprintln!("chaos: no success in 30 s for: {}", missing.join(", "));
            std::process::exit(1);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "chaos: every client served; baseline for {} s",
        args.baseline
    );

    let mut phases = vec![Phase {
        name: "none".into(),
        start: record.now(),
        healed: None,
        end: 0.0,
    }];
    tokio::time::sleep(secs(args.baseline)).await;
    let mut aborted = None;
    for (name, hold) in &args.faults {
        let start = record.now();
        if let Some(last) = phases.last_mut() {
            last.end = start;
        }
        eprintln!("chaos: {start:.1} s: inject {name}");
        if let Err(e) = control(&args.control, "inject", name).await {
            aborted = Some(e);
            phases.push(Phase {
                name: name.clone(),
                start,
                healed: None,
                end: 0.0,
            });
            break;
        }
        tokio::time::sleep(secs(*hold)).await;
        let heal = control(&args.control, "heal", name).await;
        let healed = record.now();
        eprintln!("chaos: {healed:.1} s: healed {name}");
        phases.push(Phase {
            name: name.clone(),
            start,
            healed: Some(healed),
            end: 0.0,
        });
        if let Err(e) = heal {
            aborted = Some(e);
            break;
        }
        tokio::time::sleep(secs(args.settle)).await;
    }
    let stop = record.now();
    if let Some(last) = phases.last_mut() {
        last.end = stop;
    }
    load.running.store(false, Ordering::Relaxed);
    // Tasks and reads in flight finish (each bounded by its own deadline).
    let drain = secs(args.task_deadline + args.timeout * 2.0);
    if tokio::time::timeout(drain, async {
        while clients.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        eprintln!("chaos: clients still busy after {drain:?}: left");
        clients.abort_all();
    }
    let (ops, dropped, touches, heard, admitted) = record.take();
    if let Some(path) = &args.trace {
        let mut out = String::from("at\tclass\toutcome\n");
        for op in &ops {
            if !matches!(op.outcome, record::Outcome::Ok | record::Outcome::Refused) {
                out.push_str(&format!("{:.3}\t{}\t{:?}\n", op.at, op.class, op.outcome));
            }
        }
        for phase in &phases {
            out.push_str(&format!(
                "{:.3}\tphase\t{} (healed {:?}, until {:.3})\n",
                phase.start, phase.name, phase.healed, phase.end
            ));
        }
        if let Err(e) = std::fs::write(path, out) {
            eprintln!("chaos: cannot write {path}: {e}");
        }
    }
    let run = Run {
        phases,
        skipped: args.skipped,
        ops,
        dropped,
        touches,
        heard,
        admitted,
        window: args.window,
        rate_limit: args.rate_limit,
    };
    let verdict = run.verdict();
    println!("{}", verdict.text);
    if let Some(e) = aborted {
        eprintln!("chaos: the run stopped early: {e}");
        std::process::exit(1);
    }
    if verdict.failed {
        std::process::exit(1);
    }
}
