//! The worker thread that owns the running scenario. The window sends [`Command`]s and receives
//! [`Event`]s; it never runs an iteration itself. While playing, the worker checks for commands
//! between iterations (so Pause takes effect at the end of the running iteration); a reset, a new
//! load or a shutdown also raise the cancel flag, which the engines check per chunk of work, so
//! they interrupt even a long iteration within a chunk. The worker sends an `Arc` snapshot at
//! most about 60 times a second, calling the `notify` callback (the window's `request_repaint`)
//! after each event. A panic inside the scenario becomes an [`Event::Error`]; the thread lives on.
//!
//! Every command gets a number when it is sent ([`Runner::send`] returns it), and every snapshot
//! says which command it answers ([`Snapshot::answered`]), so the window never guesses whether
//! a load or a Play has been dealt with. A snapshot carries only the iteration records that are
//! new since the previous one ([`Snapshot::new_records`]); [`HistoryLog`] on the receiving side
//! appends them, so a snapshot costs O(new iterations), not O(all iterations so far).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::run::residuals::ConvergenceView;
use crate::scenarios::what_if::{WhatIfRequest, WhatIfRun};
use crate::scenarios::{
    CancelFlag, IterationRecord, Probe, Scenario, ScenarioConfig, ScenarioControl, ScenarioView,
    Schedule, Task, TaskResult,
};

/// Shortest interval between two snapshots while playing (about 60 per second).
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(16);

/// What the window asks of the worker.
#[derive(Debug, Clone)]
pub enum Command {
    /// Build a scenario from this config (also how parameters are set). On failure the running
    /// scenario is kept and an error is sent.
    Load(ScenarioConfig),
    Play,
    Pause,
    /// One iteration, even past the maximum.
    Step,
    /// Rebuild the current scenario from its config (iteration 0).
    Reset,
    /// Select what the inspector shows.
    Probe(Option<Probe>),
    /// A live change to the running scenario (e.g. the tree explorer's evidence slider);
    /// applied at once, followed by a snapshot. Pending controls are applied together, so a
    /// fast slider never queues up work.
    Control(ScenarioControl),
    /// Run a long job (auto-tune, sweep) on the worker; iterations pause meanwhile.
    RunTask(Task),
    /// Stop the running task (or set-up) at its next check.
    Cancel,
    /// Switch the running engine's schedule and damping from the next iteration on, keeping
    /// its messages (the convergence debugger's live switch).
    SetSchedule {
        schedule: Schedule,
        damping: f64,
    },
    /// Run a copy of the running engine with another schedule or damping from its current
    /// state and report the measured residuals ([`Event::WhatIf`]); the run is untouched.
    WhatIf(WhatIfRequest),
    /// Tests only: make the engine panic at the next set-up or at an iteration (see [`Fault`]).
    InjectFault(Fault),
    Shutdown,
}

/// A deliberate engine panic, for the tests that check a fault is isolated: the worker
/// survives, the window keeps what it has and a new run can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Panic inside the next scenario set-up.
    Setup,
    /// Panic inside the iteration that would make the history this long.
    Step(usize),
}

/// What the worker reports.
#[derive(Debug, Clone)]
pub enum Event {
    /// The state after a command or an iteration; complete it with [`HistoryLog::absorb`].
    Snapshot(Box<Snapshot>),
    /// Something failed; the message names the problem. What was computed before is kept.
    Error(String),
    /// A slow operation started (e.g. a set-up); cleared by the next snapshot.
    Busy(String),
    /// A what-if or task stopped because it was cancelled (Cancel, a new load, another scenario):
    /// news, not a failure.
    Cancelled(String),
    /// A task advanced: `done` of `total` steps.
    TaskProgress {
        label: &'static str,
        done: usize,
        total: usize,
    },
    /// A task finished.
    TaskDone(TaskResult),
    /// A what-if run finished (for the iteration of the run it started from).
    WhatIf(WhatIfRun),
}

/// Everything the window draws, as of one moment of the worker.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Increases with every snapshot sent.
    pub seq: u64,
    /// The number of the last command the worker had handled (see [`Runner::send`]).
    pub answered: u64,
    /// Increases with every scenario built (a load, a reset, a replay): the history starts over.
    pub run: u64,
    /// Index in the run's history of the first of `new_records`.
    pub first_new: usize,
    /// The iteration records that are new since the previous snapshot of the same run.
    pub new_records: Vec<IterationRecord>,
    pub config: ScenarioConfig,
    pub algorithm: String,
    pub setup_seconds: f64,
    pub iteration: usize,
    pub playing: bool,
    pub finished: bool,
    /// Every iteration of the run: empty as sent, filled by [`HistoryLog::absorb`].
    pub history: Arc<Vec<IterationRecord>>,
    pub view: ScenarioView,
    pub probe: Option<Probe>,
    /// What the convergence debugger draws, for scenarios that track it.
    pub convergence: Option<ConvergenceView>,
}

/// The receiving side's copy of the running scenario's history: each snapshot appends its new
/// records. Keep the snapshots it returns only briefly (a frame): `absorb` appends in place when
/// no older snapshot still shares the history, and copies it otherwise.
#[derive(Debug, Default)]
pub struct HistoryLog {
    run: Option<u64>,
    records: Arc<Vec<IterationRecord>>,
}

impl HistoryLog {
    /// `snapshot` with its `history` set to every record of its run.
    pub fn absorb(&mut self, mut snapshot: Snapshot) -> Snapshot {
        if self.run != Some(snapshot.run) {
            self.run = Some(snapshot.run);
            self.records = Arc::new(Vec::new());
        }
        let records = Arc::make_mut(&mut self.records);
        records.truncate(snapshot.first_new);
        records.append(&mut snapshot.new_records);
        snapshot.history = self.records.clone();
        snapshot
    }
}

/// Lowers the calling thread's scheduling priority (nice +10 on Linux, where nice is per
/// thread), so that on a machine with few cores the window's frames are scheduled before the
/// engine's iterations. Call it from engine threads only.
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on the calling thread (who = 0) with a valid nice value.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Makes rayon's global pool (used by every algorithm) run at background priority. Call once,
/// before any parallel work, in a process that shows a window; a later call has no effect.
pub fn use_background_priority_for_engine_threads() {
    let _ = rayon::ThreadPoolBuilder::new()
        .start_handler(|_| lower_thread_priority())
        .build_global();
}

/// The window's handle on the worker thread. Dropping it shuts the worker down.
pub struct Runner {
    commands: Sender<(u64, Command)>,
    /// The number of the last command sent.
    sent: AtomicU64,
    events: Receiver<Event>,
    cancel: CancelFlag,
    /// True while the worker runs an iteration (a reset interrupts only that).
    stepping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Runner {
    /// Starts the worker; if `initial` is given it is loaded and played at once.
    pub fn spawn(initial: Option<ScenarioConfig>, notify: Arc<dyn Fn() + Send + Sync>) -> Runner {
        let (commands, command_rx) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let cancel = CancelFlag::default();
        let stepping = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            commands: command_rx,
            answered: 0,
            run: 0,
            records_sent: 0,
            events: event_tx,
            notify,
            cancel: cancel.clone(),
            stepping: stepping.clone(),
            scenario: None,
            last_config: None,
            playing: false,
            fault: None,
            probe: None,
            seq: 0,
            last_snapshot: None,
            last_step: None,
        };
        let thread = std::thread::Builder::new()
            .name("beliefscope-engine".into())
            .spawn(move || {
                // The runner serves a window: its iterations yield to the frames.
                lower_thread_priority();
                worker.run()
            })
            .expect("cannot start the engine thread");
        let runner = Runner {
            commands,
            sent: AtomicU64::new(0),
            events,
            cancel,
            stepping,
            thread: Some(thread),
        };
        if let Some(config) = initial {
            runner.send(Command::Load(config));
            runner.send(Command::Play);
        }
        runner
    }

    /// Sends `command` and returns its number; a snapshot with `answered >= number` comes after
    /// the worker has dealt with it (a failed load also answers, with the old scenario).
    pub fn send(&self, command: Command) -> u64 {
        // A new load and a shutdown discard the running state, so they interrupt a long
        // set-up, task or iteration still running; Cancel stops a set-up or task; a reset
        // interrupts an iteration (a set-up in progress is what the reset rebuilds, so it goes
        // on). The flag is raised before the command is queued: the worker clears it when it
        // handles the command, so it never outlives the command it was raised for.
        let interrupts = match command {
            Command::Load(_) | Command::Shutdown | Command::Cancel => true,
            Command::Reset => self.stepping.load(Ordering::SeqCst),
            _ => false,
        };
        if interrupts {
            self.cancel.cancel();
        }
        let number = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = self.commands.send((number, command));
        number
    }
}

impl Runner {
    /// Every event that has arrived, oldest first, without blocking.
    pub fn drain(&self) -> Vec<Event> {
        self.events.try_iter().collect()
    }

    /// How many times the running work has checked the cancel flag so far (it checks per
    /// chunk): a count that grows while an iteration, set-up or task is under way.
    pub fn chunk_checks(&self) -> u64 {
        self.cancel.checks()
    }

    /// Blocks up to `timeout` for the next event (for tests and the CLI).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Event> {
        self.events.recv_timeout(timeout).ok()
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Worker {
    commands: Receiver<(u64, Command)>,
    /// The number of the last command handled.
    answered: u64,
    /// Counts the scenarios built (see [`Snapshot::run`]).
    run: u64,
    /// How many records of the current run's history have been sent.
    records_sent: usize,
    events: Sender<Event>,
    notify: Arc<dyn Fn() + Send + Sync>,
    cancel: CancelFlag,
    /// Shared with the runner: set while an iteration runs.
    stepping: Arc<AtomicBool>,
    scenario: Option<Box<dyn Scenario>>,
    /// The config of the last scenario built, kept when a panic drops the scenario so that
    /// Reset and Play can start a new run of it.
    last_config: Option<ScenarioConfig>,
    playing: bool,
    /// A deliberate panic armed by a test ([`Command::InjectFault`]).
    fault: Option<Fault>,
    probe: Option<Probe>,
    seq: u64,
    last_snapshot: Option<Instant>,
    /// When the last iteration started (paces [`Scenario::play_interval`]).
    last_step: Option<Instant>,
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    crate::error::panic_message(payload.as_ref())
}

impl Worker {
    fn run(mut self) {
        loop {
            let command = if self.playing {
                match self.pace_wait() {
                    // A paced scenario (teaching mode): wait for the next step, listening.
                    Some(wait) => match self.commands.recv_timeout(wait) {
                        Ok(c) => Some(c),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    },
                    None => match self.commands.try_recv() {
                        Ok(c) => Some(c),
                        Err(mpsc::TryRecvError::Empty) => None,
                        Err(mpsc::TryRecvError::Disconnected) => return,
                    },
                }
            } else {
                match self.commands.recv_timeout(Duration::from_millis(250)) {
                    Ok(c) => Some(c),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            if let Some((number, command)) = command {
                if !self.handle(number, command) {
                    return;
                }
                continue;
            }
            if self.playing {
                self.step_once();
                // Always report the last iteration; while playing, at most ~60 per second.
                let due = self
                    .last_snapshot
                    .is_none_or(|t| t.elapsed() >= SNAPSHOT_INTERVAL);
                let paced = self
                    .scenario
                    .as_ref()
                    .is_some_and(|s| s.play_interval().is_some());
                if !self.playing || due || paced {
                    self.send_snapshot();
                }
            }
        }
    }

    /// Applies one command; false means shut down.
    fn handle(&mut self, number: u64, command: Command) -> bool {
        self.answered = number;
        match command {
            Command::Shutdown => {
                if let Some(scenario) = self.scenario.take() {
                    crate::run::drop_in_background(scenario);
                }
                return false;
            }
            Command::Load(config) => self.load(config),
            Command::Reset => {
                self.cancel.reset();
                if let Some(config) = self.current_config() {
                    let playing = self.playing;
                    self.load(config);
                    self.playing = playing;
                }
            }
            Command::Play => {
                // Play after the end starts over, as a media player does; after a fault it
                // starts a new run of the same config.
                let start_over = match self.scenario.as_ref() {
                    Some(s) => s.finished(),
                    None => true,
                };
                if start_over && let Some(config) = self.current_config() {
                    self.load(config);
                }
                self.playing = self.scenario.is_some();
            }
            Command::Pause => self.playing = false,
            Command::Step => {
                self.playing = false;
                if self.scenario.is_none()
                    && let Some(config) = self.last_config.clone()
                {
                    self.load(config);
                }
                self.step_once();
            }
            Command::Probe(p) => self.probe = p,
            Command::Control(c) => {
                // Coalesce: apply every control already queued before one snapshot; any other
                // command waits for the next loop turn.
                let mut controls = vec![c];
                let mut deferred = None;
                while let Ok((next_number, next)) = self.commands.try_recv() {
                    match next {
                        Command::Control(c) => {
                            self.answered = next_number;
                            controls.push(c);
                        }
                        other => {
                            deferred = Some((next_number, other));
                            break;
                        }
                    }
                }
                self.apply_controls(&controls);
                if let Some((next_number, other)) = deferred {
                    self.send_snapshot();
                    return self.handle(next_number, other);
                }
            }
            // The flag raised for this Cancel has done its work (or found nothing to stop).
            Command::Cancel => self.cancel.reset(),
            Command::InjectFault(fault) => self.fault = Some(fault),
            Command::RunTask(task) => {
                self.playing = false;
                self.run_task(task);
            }
            Command::SetSchedule { schedule, damping } => {
                if let Some(scenario) = self.scenario.as_mut() {
                    match catch_unwind(AssertUnwindSafe(|| {
                        scenario.set_schedule(schedule, damping)
                    })) {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => self.emit(Event::Error(e.to_string())),
                        Err(p) => self.emit(Event::Error(format!(
                            "the engine panicked switching schedules: {}",
                            panic_message(p)
                        ))),
                    }
                }
            }
            Command::WhatIf(request) => self.what_if(request),
        }
        self.send_snapshot();
        true
    }

    /// The config to start a new run from: the running scenario's (with its live changes),
    /// else the last one built.
    fn current_config(&self) -> Option<ScenarioConfig> {
        match self.scenario.as_ref() {
            Some(s) => Some(s.config()),
            None => self.last_config.clone(),
        }
    }

    /// Drops a scenario whose state a panic left unknown, remembering its config (with the
    /// live changes made so far, if reading it does not panic too).
    fn forget_scenario(&mut self) {
        if let Some(scenario) = self.scenario.take() {
            if let Ok(config) = catch_unwind(AssertUnwindSafe(|| scenario.config())) {
                self.last_config = Some(config);
            }
            crate::run::drop_in_background(scenario);
        }
    }

    fn load(&mut self, config: ScenarioConfig) {
        self.cancel.reset();
        self.emit(Event::Busy(format!("setting up {} ...", config.name())));
        let cancel = self.cancel.clone();
        let fault = self.fault.take_if(|f| *f == Fault::Setup);
        match catch_unwind(AssertUnwindSafe(|| {
            if fault.is_some() {
                panic!("injected fault during set-up");
            }
            config.build(&cancel)
        })) {
            Ok(Ok(scenario)) => {
                self.last_config = Some(config.clone());
                // The probe stays: the views ignore one that names nothing in the new scenario.
                self.scenario = Some(scenario);
                self.run += 1;
                self.records_sent = 0;
            }
            // A newer Load or a shutdown interrupted this one: nothing to report.
            Ok(Err(crate::error::Error::Cancelled)) => {}
            Ok(Err(e)) => self.emit(Event::Error(format!("cannot load {}: {e}", config.name()))),
            Err(p) => self.emit(Event::Error(format!(
                "the engine panicked while setting up {}: {}",
                config.name(),
                panic_message(p)
            ))),
        }
    }

    fn apply_controls(&mut self, controls: &[ScenarioControl]) {
        // A control immediately followed by one that supersedes it (the same slider moved
        // again) is skipped: the outcome is the same, the wait is shorter.
        for (i, c) in controls.iter().enumerate() {
            if controls.get(i + 1).is_some_and(|next| next.supersedes(c)) {
                continue;
            }
            let Some(scenario) = self.scenario.as_mut() else {
                return;
            };
            match catch_unwind(AssertUnwindSafe(|| scenario.control(c))) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => self.emit(Event::Error(e.to_string())),
                Err(p) => {
                    self.forget_scenario();
                    self.emit(Event::Error(format!(
                        "the engine panicked: {}",
                        panic_message(p)
                    )));
                    return;
                }
            }
        }
    }

    fn what_if(&mut self, request: WhatIfRequest) {
        let Some(scenario) = self.scenario.as_ref() else {
            return;
        };
        self.cancel.reset();
        self.emit(Event::Busy(format!(
            "what-if: {} schedule, damping {} ...",
            request.schedule.label(),
            request.damping
        )));
        match catch_unwind(AssertUnwindSafe(|| scenario.what_if(request, &self.cancel))) {
            Ok(Ok(run)) => self.emit(Event::WhatIf(run)),
            Ok(Err(crate::error::Error::Cancelled)) => {
                self.emit(Event::Cancelled("what-if cancelled".into()))
            }
            Ok(Err(e)) => self.emit(Event::Error(format!("what-if failed: {e}"))),
            Err(p) => self.emit(Event::Error(format!(
                "the engine panicked in a what-if run: {}",
                panic_message(p)
            ))),
        }
    }

    fn run_task(&mut self, task: Task) {
        self.cancel.reset();
        let label = task.label();
        let events = self.events.clone();
        let notify = self.notify.clone();
        let progress = move |done: usize, total: usize| {
            let _ = events.send(Event::TaskProgress { label, done, total });
            notify();
        };
        match catch_unwind(AssertUnwindSafe(|| task.run(&self.cancel, &progress))) {
            Ok(Ok(result)) => self.emit(Event::TaskDone(result)),
            Ok(Err(crate::error::Error::Cancelled)) => {
                self.emit(Event::Cancelled(format!("{label} cancelled")))
            }
            Ok(Err(e)) => self.emit(Event::Error(format!("{label} failed: {e}"))),
            Err(p) => self.emit(Event::Error(format!(
                "the engine panicked during {label}: {}",
                panic_message(p)
            ))),
        }
    }

    /// While playing a scenario with a [`Scenario::play_interval`]: the time left before its
    /// next iteration is due (None: due now, or the scenario is not paced).
    fn pace_wait(&self) -> Option<Duration> {
        let interval = self.scenario.as_ref()?.play_interval()?;
        let since = self.last_step?.elapsed();
        interval.checked_sub(since).filter(|w| !w.is_zero())
    }

    fn step_once(&mut self) {
        self.last_step = Some(Instant::now());
        let Some(scenario) = self.scenario.as_mut() else {
            self.playing = false;
            return;
        };
        let fault = self
            .fault
            .take_if(|f| *f == Fault::Step(scenario.history().len() + 1));
        self.stepping.store(true, Ordering::SeqCst);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if let Some(Fault::Step(n)) = fault {
                panic!("injected fault in iteration {n}");
            }
            scenario.step()
        }));
        self.stepping.store(false, Ordering::SeqCst);
        match outcome {
            Ok(Ok(_)) => {
                if scenario.finished() {
                    self.playing = false;
                }
            }
            Ok(Err(crate::error::Error::Cancelled)) => {
                // Interrupted inside the iteration (by a reset, a new load or a shutdown, which
                // replace the run): its messages are partly updated, so the run ends here and
                // the window keeps what it last showed.
                // Playing stays as it was: a reset of a playing run plays the new one.
                let iteration = scenario.history().len() + 1;
                self.forget_scenario();
                self.emit(Event::Cancelled(format!(
                    "iteration {iteration} interrupted"
                )));
            }
            Ok(Err(e)) => {
                self.playing = false;
                self.emit(Event::Error(e.to_string()));
            }
            Err(p) => {
                // State after a panic is unknown: drop the scenario, keep the window alive.
                self.playing = false;
                self.forget_scenario();
                self.emit(Event::Error(format!(
                    "the engine panicked: {}",
                    panic_message(p)
                )));
            }
        }
    }

    fn send_snapshot(&mut self) {
        let Some(scenario) = self.scenario.as_ref() else {
            return;
        };
        let probe = self.probe;
        let view = match catch_unwind(AssertUnwindSafe(|| scenario.view(probe))) {
            Ok(v) => v,
            Err(p) => {
                self.probe = None;
                self.emit(Event::Error(format!(
                    "the engine panicked while drawing: {}",
                    panic_message(p)
                )));
                return;
            }
        };
        self.seq += 1;
        let history = scenario.history();
        let first_new = self.records_sent.min(history.len());
        self.records_sent = history.len();
        let snapshot = Snapshot {
            seq: self.seq,
            answered: self.answered,
            run: self.run,
            first_new,
            new_records: history[first_new..].to_vec(),
            config: scenario.config(),
            algorithm: scenario.algorithm(),
            setup_seconds: scenario.setup_seconds(),
            iteration: scenario.history().last().map_or(0, |r| r.iter),
            playing: self.playing,
            finished: scenario.finished(),
            history: Arc::default(),
            view,
            probe,
            convergence: scenario.convergence(),
        };
        self.last_snapshot = Some(Instant::now());
        self.emit(Event::Snapshot(Box::new(snapshot)));
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
        (self.notify)();
    }
}
