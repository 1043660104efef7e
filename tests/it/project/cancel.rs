//! Stop within a chunk: the engines check the cancel flag per chunk of work inside an iteration
//! (counted by the flag, not timed), a reset or a new load interrupts a long iteration or
//! set-up in the window's worker, and a set cancel flag stops an iteration before any work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use beliefscope::error::Error;
use beliefscope::inference::Schedule;
use beliefscope::run::CancelFlag;
use beliefscope::runner::{Command, Event, Runner, Snapshot};
use beliefscope::scenarios::denoise::schedule_choice::ScheduleChoice;
use beliefscope::scenarios::denoise::{Denoise, DenoiseConfig};
use beliefscope::scenarios::flow::FlowScenario;
use beliefscope::scenarios::flow::config::{FlowAlgorithm, FlowConfig};
use beliefscope::scenarios::{Scenario, ScenarioConfig};

/// Pixels of the largest block the kernel-BP sweep updates between two checks.
const SWEEP_BLOCK_PIXELS: usize = 64 * 64;

fn denoise(width: usize, height: usize, schedule: Schedule) -> DenoiseConfig {
    DenoiseConfig {
        width,
        height,
        max_iters: 1000,
        tolerance: 0.0,
        schedule: ScheduleChoice::Fixed(schedule),
        ..DenoiseConfig::default()
    }
}

#[test]
fn a_kernel_bp_iteration_checks_the_flag_per_block_and_stops_before_working_once_it_is_set() {
    let (w, h) = (640, 480);
    for schedule in [Schedule::Sweep, Schedule::Synchronous] {
        let flag = CancelFlag::default();
        let mut scenario = Denoise::new(denoise(w, h, schedule), &flag).unwrap();
        let before = flag.checks();
        scenario.step().unwrap();
        let checks = flag.checks() - before;
        // Both passes of the sweep (or the synchronous chunks of 64 pixels) over the image
        // alone; SURE's probes and window add their own.
        let least = 2 * w * h / SWEEP_BLOCK_PIXELS;
        assert!(
            checks as usize >= least,
            "{schedule:?}: {checks} checks in an iteration of {w} x {h}, expected at least {least}"
        );
        flag.cancel();
        let at_cancel = flag.checks();
        let history = scenario.history().len();
        assert!(matches!(scenario.step(), Err(Error::Cancelled)));
        assert_eq!(scenario.history().len(), history, "{schedule:?}");
        if schedule == Schedule::Sweep {
            // The first block diagonal is one block: it sees the flag and nothing runs.
            assert!(
                flag.checks() - at_cancel <= 2,
                "{} checks after the flag was set",
                flag.checks() - at_cancel
            );
        }
    }
}

#[test]
fn discrete_bp_checks_the_flag_per_chunk_of_messages() {
    let flag = CancelFlag::default();
    let config = DenoiseConfig {
        algorithm: beliefscope::scenarios::denoise::config::DenoiseAlgorithm::Discrete,
        sure_stop: false,
        ..denoise(200, 150, Schedule::Synchronous)
    };
    let mut scenario = Denoise::new(config, &flag).unwrap();
    let before = flag.checks();
    scenario.step().unwrap();
    let checks = flag.checks() - before;
    // 4 x 200 x 150 messages; a chunk holds at most a few hundred of them.
    assert!(checks >= 100, "{checks} checks in a discrete-BP iteration");
    flag.cancel();
    assert!(matches!(scenario.step(), Err(Error::Cancelled)));
}

#[test]
fn the_flow_refinement_and_discrete_flow_bp_stop_at_the_flag() {
    for algorithm in [FlowAlgorithm::Discrete, FlowAlgorithm::Sosmp] {
        let flag = CancelFlag::default();
        let config = FlowConfig {
            width: 160,
            height: 120,
            algorithm,
            ..FlowConfig::default()
        };
        let mut scenario = FlowScenario::new(config, &flag).unwrap();
        let mut checks = Vec::new();
        while !scenario.finished() {
            let before = flag.checks();
            scenario.step().unwrap();
            checks.push(flag.checks() - before);
        }
        // The last iteration refines the finest level: a check per SOR sweep.
        let last = *checks.last().unwrap();
        assert!(last >= 10, "{algorithm:?}: {last} checks in the refinement");
        // Discrete BP checks before each half of an iteration, SOSMP per 4096 nodes.
        let least = if algorithm == FlowAlgorithm::Discrete {
            2
        } else {
            1
        };
        assert!(
            checks.iter().all(|&c| c >= least),
            "{algorithm:?}: checks per iteration {checks:?}"
        );
        // A new run stopped in its first iteration.
        let flag = CancelFlag::default();
        let mut scenario = FlowScenario::new(
            FlowConfig {
                width: 160,
                height: 120,
                algorithm,
                ..FlowConfig::default()
            },
            &flag,
        )
        .unwrap();
        flag.cancel();
        assert!(matches!(scenario.step(), Err(Error::Cancelled)));
        assert_eq!(scenario.history().len(), 0, "{algorithm:?}");
    }
}

#[test]
fn a_kernel_bp_set_up_checks_the_flag_per_chunk_of_pixels() {
    // Setting up a photograph's messages and first estimates takes seconds: both check the
    // flag per 4096 pixels.
    let (w, h) = (1000, 800);
    let flag = CancelFlag::default();
    let config = DenoiseConfig {
        sure_stop: false,
        ..denoise(w, h, Schedule::Sweep)
    };
    Denoise::new(config, &flag).unwrap();
    let least = 2 * w * h / 4096;
    assert!(
        flag.checks() as usize >= least,
        "{} checks in the set-up of {w} x {h}, expected at least {least}",
        flag.checks()
    );
}

/// The first snapshot that `accept`s, within 120 s (a guard against a hang, not a bound).
fn until(runner: &Runner, mut accept: impl FnMut(&Snapshot) -> bool) -> Snapshot {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if let Some(Event::Snapshot(s)) = runner.recv_timeout(Duration::from_millis(50))
            && accept(&s)
        {
            return *s;
        }
    }
    panic!("no such snapshot within 120 s");
}

#[test]
fn a_reset_interrupts_a_long_iteration_and_starts_the_run_over() {
    // Iterations of a 700 x 700 sweep take about a second: the reset lands inside one.
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        sure_stop: false,
        ..denoise(700, 700, Schedule::Sweep)
    });
    let runner = Runner::spawn(Some(config), Arc::new(|| {}));
    let first = until(&runner, |s| s.iteration >= 1);
    // Iteration 2 is under way once the engine checks the flag again.
    let checks = runner.chunk_checks();
    while runner.chunk_checks() <= checks + 1 {
        std::thread::yield_now();
    }
    let number = runner.send(Command::Reset);
    let mut interrupted = None;
    let start = Instant::now();
    let answer = loop {
        assert!(start.elapsed() < Duration::from_secs(120), "no answer");
        match runner.recv_timeout(Duration::from_millis(50)) {
            Some(Event::Cancelled(text)) => interrupted = Some(text),
            Some(Event::Error(text)) => panic!("{text}"),
            Some(Event::Snapshot(s)) if s.answered >= number => break *s,
            _ => {}
        }
    };
    let text = interrupted.expect("the iteration running at the reset was not interrupted");
    assert!(text.contains("interrupted"), "{text}");
    assert!(answer.run > first.run, "the reset started no new run");
    assert_eq!(answer.iteration, 0);
    assert!(answer.playing, "a reset of a playing run plays the new one");
}

#[test]
fn a_long_set_up_gives_way_to_the_next_load() {
    // A denoise set-up of 800 x 600 takes a while; the next load abandons it.
    let runner = Runner::spawn(None, Arc::new(|| {}));
    runner.send(Command::Load(ScenarioConfig::Denoise(DenoiseConfig {
        width: 800,
        height: 600,
        ..DenoiseConfig::default()
    })));
    // The set-up is under way once it checks the flag (after making the image).
    let guard = Instant::now();
    while runner.chunk_checks() == 0 {
        assert!(
            guard.elapsed() < Duration::from_secs(120),
            "no set-up began"
        );
        std::thread::yield_now();
    }
    let small = ScenarioConfig::Denoise(DenoiseConfig {
        width: 20,
        height: 20,
        ..DenoiseConfig::default()
    });
    let number = runner.send(Command::Load(small));
    let s = until(&runner, |s| s.answered >= number);
    let ScenarioConfig::Denoise(c) = &s.config else {
        panic!("not denoise")
    };
    assert_eq!(c.width, 20);
    // The large set-up was abandoned, not finished: the small scenario is the first one built.
    assert_eq!(
        s.run, 1,
        "the 800 x 600 set-up ran to its end before the next load"
    );
}
