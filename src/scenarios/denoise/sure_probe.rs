//! The copies of an algorithm that Monte-Carlo SURE needs (Ramani, Blu and Unser 2008; the
//! rule itself is in `sure_stop.rs`): one engine per probe direction on `y + ε b`, on the whole
//! image or, on a large image, on its SURE window (`sure_window.rs`) together with a copy of the
//! run there. Building them costs one model evidence table per copy; memory is one engine per
//! copy (on the window's pixels when there is a window).

use rayon::prelude::*;

use super::*;

/// The copies of an algorithm that Monte-Carlo SURE needs (`sure_stop.rs`), one per probe.
pub struct SureProbe {
    pub engines: Vec<Engine>,
    pub tracker: SureTracker,
    /// The guard's return point: the run's messages (the window's, with a window), then each
    /// probe's, at the best iterate.
    pub(super) best_messages: Vec<SavedMessages>,
    /// On a large image: the window SURE decides on (`sure_window.rs`); the probes run on it.
    pub window: Option<WindowRun>,
}

/// The algorithm on a large image's SURE window.
pub struct WindowRun {
    pub engine: Engine,
    pub layout: SureWindow,
    /// The window's observations.
    pub noisy: Vec<f64>,
}

impl SureProbe {
    /// Steps every probe copy and returns their estimates.
    pub(super) fn step(
        &mut self,
        estimate: crate::inference::EstimateKind,
    ) -> Result<Vec<Vec<f64>>> {
        // The copies are independent: stepped side by side, so small images keep both cores
        // busy between the steps' own parallel parts.
        self.engines
            .par_iter_mut()
            .map(|e| {
                e.inference_mut().step()?;
                Ok(e.inference().estimates(estimate).values)
            })
            .collect()
    }

    /// Applies the tracker's verdict on `run_engine` (the run on y) and the probes: saves every
    /// copy's messages at a new best iterate, or takes the step back and shrinks the step.
    pub(super) fn follow(&mut self, verdict: SureVerdict, run_engine: &mut Engine) -> Result<()> {
        // Each copy's messages are megabytes on a large image: copied side by side.
        let mut copies: Vec<&mut Engine> = std::iter::once(run_engine)
            .chain(self.engines.iter_mut())
            .collect();
        match verdict {
            SureVerdict::Improved if self.tracker.rule() == SureRule::Guard => {
                copies
                    .par_iter_mut()
                    .zip(self.best_messages.par_iter_mut())
                    .for_each(|(engine, saved)| engine.save_messages_into(saved));
            }
            SureVerdict::Revert => {
                let scale = self.tracker.step_scale;
                copies
                    .par_iter_mut()
                    .zip(self.best_messages.par_iter())
                    .try_for_each(|(engine, saved)| {
                        engine.restore_messages(saved)?;
                        engine.set_step_scale(scale);
                        Ok::<(), crate::error::Error>(())
                    })?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Sets up the SURE probes of `run`: the same algorithm and model on `y + ε b_k`, one for each
/// of the config's `sure_probes` directions (resolved for the size SURE is measured on): on
/// the whole image, or on a large image's window ([`SureWindow`]), where a copy of the
/// algorithm on the window's `y` decides for the image.
pub fn attach_sure_probe(
    run: &mut AlgorithmRun,
    data: &DenoiseData,
    config: &DenoiseConfig,
    cancel: &CancelFlag,
) -> Result<()> {
    let window = match SureWindow::of(data.width, data.height) {
        None => None,
        Some(layout) => {
            let noisy = layout.take(&data.noisy);
            let engine = engine_like(&run.engine, noisy.clone(), &layout, data, config)?;
            Some(WindowRun {
                engine,
                layout,
                noisy,
            })
        }
    };
    let (observations, shape) = match &window {
        Some(w) => (&w.noisy, Some(&w.layout)),
        None => (&data.noisy, None),
    };
    let epsilon = sure_stop::EPSILON_PER_SIGMA * config.noise;
    let probes = config.sure_probes.resolve(observations.len());
    let directions: Vec<Vec<f64>> = (0..probes)
        .map(|k| sure_stop::probe_direction(observations.len(), config.seed, k))
        .collect();
    let engines = directions
        .iter()
        .map(|direction| {
            cancel.check()?;
            let noisy = sure_stop::perturbed(observations, direction, epsilon);
            match shape {
                Some(layout) => engine_like(&run.engine, noisy, layout, data, config),
                None => probe_engine(&run.engine, noisy, data, config),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    cancel.check()?;
    let initial = match &window {
        Some(w) => Arc::new(w.engine.inference().estimates(config.estimate).values),
        None => Arc::clone(&run.estimate),
    };
    run.sure = Some(SureProbe {
        engines,
        tracker: SureTracker::new(directions, epsilon, initial, config.sure_rule),
        best_messages: vec![SavedMessages::Empty; probes + 1],
        window,
    });
    Ok(())
}

/// A copy of `engine`'s algorithm and model on the window `layout` of the image, observing
/// `noisy` (the window's `y`, or a perturbation of it).
fn engine_like(
    engine: &Engine,
    noisy: Vec<f64>,
    layout: &SureWindow,
    data: &DenoiseData,
    config: &DenoiseConfig,
) -> Result<Engine> {
    let window_data = DenoiseData {
        width: layout.width,
        height: layout.height,
        levels: data.levels.clone(),
        clean: None,
        indices: Vec::new(),
        noisy: Vec::new(),
        train: data.train.clone(),
    };
    match engine {
        Engine::Discrete(_) => probe_engine(engine, noisy, &window_data, config),
        Engine::Kbp(e) => {
            let model = e.shared_model();
            let evidence = model.evidence_table(&noisy)?;
            Ok(Engine::Kbp(Box::new(
                KbpEngine::new(
                    model,
                    GridShape {
                        width: layout.width,
                        height: layout.height,
                    },
                    Some(evidence),
                    e.candidates().to_vec(),
                    config.schedule_for(DenoiseAlgorithm::Kbp),
                    Damping(config.damping),
                )?
                .with_edge_appearance(e.edge_appearance())?,
            )))
        }
    }
}

/// A copy of `engine`'s algorithm and model on the observations `noisy` (of `data`'s size).
fn probe_engine(
    engine: &Engine,
    noisy: Vec<f64>,
    data: &DenoiseData,
    config: &DenoiseConfig,
) -> Result<Engine> {
    Ok(match engine {
        Engine::Discrete(e) => {
            let probe_data = DenoiseData {
                width: data.width,
                height: data.height,
                levels: data.levels.clone(),
                clean: None,
                indices: Vec::new(),
                noisy,
                train: data.train.clone(),
            };
            Engine::Discrete(Box::new(
                DiscreteBp::sharing_table_with(
                    probe_data.discrete_mrf(config.noise)?,
                    config.schedule_for(DenoiseAlgorithm::Discrete),
                    Damping(config.damping),
                    e,
                )?
                .with_edge_appearance(e.edge_appearance())?,
            ))
        }
        Engine::Kbp(e) => {
            let model = e.shared_model();
            let evidence = model.evidence_table(&noisy)?;
            Engine::Kbp(Box::new(
                KbpEngine::new(
                    model,
                    e.shape(),
                    Some(evidence),
                    e.candidates().to_vec(),
                    config.schedule_for(DenoiseAlgorithm::Kbp),
                    Damping(config.damping),
                )?
                .with_edge_appearance(e.edge_appearance())?,
            ))
        }
    })
}
