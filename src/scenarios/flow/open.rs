//! Opening files in the flow scenario: which of the paths dropped or picked are frames and which
//! is a ground-truth `.flo`, and the Middlebury siblings (`frame10.png` brings `frame11.png` and
//! `flow10.flo`). Only routing: the files are read when the config is built, on the worker.

use super::FlowConfig;

/// What opening files does to a flow config.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowOpen {
    /// Run this config (frames, and ground truth if there is one).
    Apply(Box<FlowConfig>),
    /// One frame so far; the next image opened is frame 2.
    Waiting(std::path::PathBuf),
    Error(String),
}

fn is_flo(p: &std::path::Path) -> bool {
    p.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case("flo"))
}

/// `frameNN.ext` → (`frame(NN+1).ext`, `flowNN.flo`) in the same folder, if they exist.
fn middlebury_siblings(
    frame: &std::path::Path,
) -> Option<(Option<std::path::PathBuf>, Option<std::path::PathBuf>)> {
    let stem = frame.file_stem()?.to_str()?;
    let digits = stem.strip_prefix("frame")?;
    let n: u64 = digits.parse().ok()?;
    let ext = frame.extension()?.to_str()?;
    let dir = frame.parent()?;
    let width = digits.len();
    let next = dir.join(format!("frame{:0width$}.{ext}", n + 1));
    let flo = dir.join(format!("flow{digits}.flo"));
    Some((next.is_file().then_some(next), flo.is_file().then_some(flo)))
}

/// Opening `paths` (from the dialog or dropped together) with `pending` frame 1 waiting:
/// two images are the frames (in the order given), a `.flo` is the ground truth. One image is
/// frame 1 and waits for frame 2, unless it is a Middlebury `frameNN` whose `frame(NN+1)` (and
/// `flowNN.flo`) sit beside it. A `.flo` alone goes with the current frames.
pub fn open_flow_files(
    config: &FlowConfig,
    pending: Option<&std::path::Path>,
    paths: &[std::path::PathBuf],
) -> FlowOpen {
    let flos: Vec<_> = paths.iter().filter(|p| is_flo(p)).cloned().collect();
    let mut images: Vec<_> = pending.map(|p| p.to_path_buf()).into_iter().collect();
    images.extend(paths.iter().filter(|p| !is_flo(p)).cloned());
    if flos.len() > 1 {
        return FlowOpen::Error("open one ground-truth .flo at a time".into());
    }
    if images.len() > 2 {
        return FlowOpen::Error(format!(
            "the flow scenario takes two frames; got {} images",
            images.len()
        ));
    }
    let gt = flos.into_iter().next();
    let mut c = config.clone();
    match images.len() {
        0 => match (&c.frame1, gt) {
            (Some(_), Some(g)) => {
                c.ground_truth = Some(g);
                FlowOpen::Apply(Box::new(c))
            }
            (None, Some(_)) => FlowOpen::Error(
                "open the two frames first (the built-in pair has its own ground truth)".into(),
            ),
            (_, None) => FlowOpen::Error("nothing to open".into()),
        },
        1 => {
            let frame = images.remove(0);
            match middlebury_siblings(&frame) {
                Some((Some(next), flo)) => {
                    c.frame1 = Some(frame);
                    c.frame2 = Some(next);
                    c.ground_truth = gt.or(flo);
                    FlowOpen::Apply(Box::new(c))
                }
                _ => FlowOpen::Waiting(frame),
            }
        }
        _ => {
            let second = images.pop().expect("two");
            let first = images.pop().expect("two");
            let sibling_gt = middlebury_siblings(&first)
                .filter(|(next, _)| next.as_deref() == Some(second.as_path()))
                .and_then(|(_, flo)| flo);
            c.frame1 = Some(first);
            c.frame2 = Some(second);
            c.ground_truth = gt.or(sibling_gt);
            FlowOpen::Apply(Box::new(c))
        }
    }
}
