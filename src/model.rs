//! The neural networks, embedded in the binary (so `hamle` needs no files beside it) and loaded
//! with `tract-onnx` once per process. Inference runs one item at a time on tract's
//! single-thread executor; callers parallelise over items with rayon (one plan state per worker),
//! which measured faster than batching on CPUs like ours (see the model cards). The one
//! exception is the recurrent half of the cell and word models, run 8 items at a time
//! (see [`CellModel`]).

use std::sync::{Arc, OnceLock};

use image::GrayImage;
use rayon::prelude::*;
use tract_onnx::prelude::*;
use tract_onnx::tract_core::internal::{anyhow, bail};

/// The scoresheet cell recognizer (CRNN + CTC), see `models/cells.md`.
pub const CELL_ONNX: &[u8] = include_bytes!("../models/cells.onnx");
/// Input size of the cell recognizer.
pub const CELL_H: u32 = 32;
pub const CELL_W: u32 = 128;
/// The cell (and word) model's input, one image: `[1, 1, CELL_H, CELL_W]`.
const CELL_INPUT: [usize; 4] = [1, 1, CELL_H as usize, CELL_W as usize];
/// Output classes after the CTC blank (index 0), in order. Must match `scripts/cells_synth.py`.
pub const CELL_ALPHABET: &str = "abcdefgh12345678KQRBNŞSVFAx+#=O0-.p";

/// The printed-word recognizer (CRNN + CTC), see `models/words.md`: one word cut from a
/// scanned book page, in the cell model's input size.
pub const WORD_ONNX: &[u8] = include_bytes!("../models/words.onnx");
/// Output classes of the word recognizer after the CTC blank, in order (figurines read as
/// English letters). Must match `scripts/words_synth.py`.
pub const WORD_ALPHABET: &str = "abcdefgh0123456789KQRBNŞVFAx+#=O-.!?/½*";

/// The board square classifier (small CNN), see `models/squares.md`: exported for one board
/// = one batch of 64 grey crops, 32×32, `pixel / 255`; 13 logits per crop (hamle runs it
/// one crop at a time, see `CropPlan`).
pub const SQUARE_ONNX: &[u8] = include_bytes!("../models/squares.onnx");
/// Side of a square crop.
pub const SQUARE_S: u32 = 32;
/// Crops of one board (the batch the square and piece models are exported at).
pub const SQUARE_BATCH: usize = 64;
/// Classes of the square classifier: `0` empty, then white `P N B R Q K`, black `p n b r q k`.
pub const SQUARE_CLASSES: usize = 13;

/// The board finder for photos of physical sets (small U-Net), see `models/corners3d.md`:
/// the photo resized to `CORNER_IN × CORNER_IN`, RGB planes in 0..1; out 4 maps of
/// `(CORNER_IN / CORNER_CELL)²`: corner logits, lattice-point logits, x and y offsets within a cell.
pub const CORNER3D_ONNX: &[u8] = include_bytes!("../models/corners3d.onnx");
/// The board finder for diagrams, screens and photos of pages (the same network as
/// [`CORNER3D_ONNX`], trained on real 2D boards), see `models/corners2d.md`.
pub const CORNER2D_ONNX: &[u8] = include_bytes!("../models/corners2d.onnx");
/// Input side of the corner model for photos of sets.
pub const CORNER_IN: u32 = 256;
/// Input side of the corner model for diagrams (its maps are a quarter of it).
pub const CORNER2D_IN: u32 = 128;
/// Input pixels per side of a corner map's cell: the maps are a quarter of the input's side.
pub const CORNER_CELL: usize = 4;

/// The piece classifier for photos of physical sets, see `models/pieces3d.md`: one board =
/// one batch of 64 RGB crops, `PIECE_W × PIECE_H`, planes in 0..1; 13 logits per crop in the
/// square classifier's class order.
pub const PIECE3D_ONNX: &[u8] = include_bytes!("../models/pieces3d.onnx");
/// Width of a piece crop.
pub const PIECE_W: u32 = 32;
/// Height of a piece crop.
pub const PIECE_H: u32 = 64;

/// The printed-coordinate reader, see `models/coords.md`: 64 grey crops `COORD_S × COORD_S`
/// in 0..1 (ink dark) cut beside and inside a board's edge squares; 17 logits per crop:
/// `0` none, `1..=8` files a..h, `9..=16` ranks 1..8.
pub const COORD_ONNX: &[u8] = include_bytes!("../models/coords.onnx");
/// Side of a coordinate crop.
pub const COORD_S: usize = 24;
/// Crops of one board: its 8 sites (the batch the model is exported at).
pub const COORD_BATCH: usize = 64;
/// Classes of the coordinate reader.
pub const COORD_CLASSES: usize = 17;

type Plan = Arc<TypedRunnableModel>;

/// Log-probabilities of one cell: `frames × classes`, row-major; class 0 is the CTC blank.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFrames {
    pub frames: usize,
    pub classes: usize,
    pub logp: Vec<f32>,
}

impl CellFrames {
    #[inline]
    pub fn at(&self, t: usize, c: usize) -> f32 {
        self.logp[t * self.classes + c]
    }

    /// The best path, collapsed (greedy CTC decoding), in the cell model's alphabet.
    pub fn greedy(&self) -> String {
        self.greedy_in(CELL_ALPHABET)
    }

    /// The best path, collapsed, in `alphabet` (class `k` is its `k - 1`th character).
    pub fn greedy_in(&self, alphabet: &str) -> String {
        let alphabet: Vec<char> = alphabet.chars().collect();
        let mut out = String::new();
        let mut prev = 0;
        for t in 0..self.frames {
            let row = &self.logp[t * self.classes..(t + 1) * self.classes];
            let k = row
                .iter()
                .enumerate()
                .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b })
                .0;
            if k != prev && k != 0 {
                if let Some(&ch) = alphabet.get(k - 1) {
                    out.push(ch);
                }
            }
            prev = k;
        }
        out
    }

    /// The best log-probability of frame `t`.
    fn frame_max(&self, t: usize) -> f32 {
        self.logp[t * self.classes..(t + 1) * self.classes]
            .iter()
            .cloned()
            .fold(f32::MIN, f32::max)
    }

    /// The lowest of the frames' best probabilities.
    pub fn min_frame_prob(&self) -> f32 {
        (0..self.frames)
            .map(|t| self.frame_max(t))
            .fold(0.0f32, f32::min)
            .exp()
    }

    /// Log-probability of the best path (its frames' maxima summed).
    pub fn best_path_logp(&self) -> f32 {
        (0..self.frames).map(|t| self.frame_max(t)).sum()
    }
}

/// An ONNX model planned by tract for one fixed input shape. The output's shape is left for
/// tract to infer, so a model exported for one batch size can be planned at another.
fn plan_for(bytes: &[u8], shape: [usize; 4]) -> TractResult<Plan> {
    tract_onnx::onnx()
        .model_for_read(&mut std::io::Cursor::new(bytes))?
        .with_input_fact(0, f32::fact(shape).into())?
        .with_output_fact(0, Default::default())?
        .into_optimized()?
        .into_runnable()
}

/// A classifier of fixed-size crops (`[crops, C, H, W]` in, `[crops, K]` logits out) that
/// classifies each crop on its own, planned at a small batch and run chunk by chunk over
/// any number of crops.
///
/// The models are exported with a batch of 64 (one board), but tract runs one batch of 64
/// slower than the same crops in small batches. On one core of this machine, the variants
/// taking turns (`examples/crop_batch.rs`, medians of 40 boards, three runs): the square
/// model 19.8–25.2 ms a board as one batch of 64 against 16.1–16.6 ms as 64 runs of one, the
/// piece model 59–74 ms against 36–38 ms, and the coordinate model 4.1–4.7 ms against
/// 3.8–4.3 ms in batches of 16 (its runs of one, 4.5–4.8 ms, pay more overhead than they
/// save). A batch of 64 keeps every layer's activations for all 64 crops, which outgrows
/// the cache.
struct CropPlan {
    plan: Plan,
    batch: usize,
    /// `[C, H, W]` of one crop.
    crop: [usize; 3],
}

impl CropPlan {
    fn load(
        var: &str,
        embedded: &[u8],
        batch: usize,
        crop: [usize; 3],
    ) -> Result<CropPlan, String> {
        let [c, h, w] = crop;
        load_env_or(var, embedded, [batch, c, h, w]).map(|plan| CropPlan { plan, batch, crop })
    }

    fn from_bytes(bytes: &[u8], batch: usize, crop: [usize; 3]) -> TractResult<CropPlan> {
        let [c, h, w] = crop;
        let plan = plan_for(bytes, [batch, c, h, w])?;
        Ok(CropPlan { plan, batch, crop })
    }

    /// Logits of the crops in `pixels` (crop after crop, each `C × H × W` values).
    fn run<const K: usize>(&self, pixels: &[f32]) -> TractResult<Vec<[f32; K]>> {
        let len: usize = self.crop.iter().product();
        if !pixels.len().is_multiple_of(len) {
            return Err(anyhow!(
                "{} values are not a whole number of {len}-value crops",
                pixels.len()
            ));
        }
        let [c, h, w] = self.crop;
        let shape = [self.batch, c, h, w];
        // The models are feed-forward: one state serves every chunk.
        let mut state = self.plan.spawn()?;
        let mut out = Vec::with_capacity(pixels.len() / len);
        let mut padded = Vec::new();
        for chunk in pixels.chunks(self.batch * len) {
            let input = if chunk.len() == self.batch * len {
                Tensor::from_shape(&shape, chunk)?
            } else {
                // the last chunk, short of a batch: padded with blank crops
                padded.clear();
                padded.extend_from_slice(chunk);
                padded.resize(self.batch * len, 0.0);
                Tensor::from_shape(&shape, &padded)?
            };
            let res = state.run(tvec!(input.into_tvalue()))?;
            let rows = logit_rows::<K>(&res[0], self.batch)?;
            out.extend(rows.into_iter().take(chunk.len() / len));
        }
        Ok(out)
    }
}

/// The cell recognizer, ready to run.
///
/// The model is planned in two parts, cut where its convolutions hand their frames to the
/// recurrent layers (`CELL_CUT`): the convolutions at a batch of 1, the BiLSTM at a batch
/// of up to `RNN_BATCH` (8) cells. A batch of 1 suits the convolutions best (a batch of cells
/// outgrows the cache), but a BiLSTM step at a batch of 1 is a matrix-vector product; at 8
/// it is a small matrix product. On one core (`examples/cell_speed.rs`, the cells of a dev
/// sheet, the two taking turns) a cell took 4.6–6.2 ms whole and takes 3.5–4.7 ms so; the
/// BiLSTM part alone 2.5 ms at a batch of 1 and 1.7–2.0 ms a cell at 8 (`models/cells.md`).
pub struct CellModel {
    plans: CellPlans,
}

enum CellPlans {
    /// The convolutions (`[1, 1, H, W]` → `[T, 1, C]`) and the recurrent layers
    /// (`[T, batch, C]` → `[T, batch, K]`, for any batch).
    Split {
        conv: Plan,
        rnn: Plan,
        frames: usize,
        features: usize,
    },
    /// A model without the cut (an older export named by `HAMLE_CELL_MODEL`): whole, one
    /// cell at a time.
    Whole(Plan),
}

/// Where the cell and word models are cut in two: the convolutions' output as the
/// recurrent layers read it, `[T, batch, C]` (the name PyTorch's exporter gives it).
const CELL_CUT: &str = "/Transpose_output_0";
/// Most cells per run of the recurrent part (planned for any batch). A cell's output
/// depends on the batch it runs in only by rounding (under 1e-5 here).
const RNN_BATCH: usize = 8;
/// Images made into inputs and run at a time by [`CellModel::run_cells`] and
/// [`WordModel::read`] (a multiple of [`RNN_BATCH`]).
const IMAGE_BLOCK: usize = 64;

static CELL_MODEL: OnceLock<Result<CellModel, String>> = OnceLock::new();

impl CellModel {
    /// The embedded model, loaded on first use. For comparing candidate models without a
    /// rebuild, `HAMLE_CELL_MODEL=PATH` loads that ONNX file instead.
    pub fn get() -> Result<&'static CellModel, String> {
        CELL_MODEL
            .get_or_init(|| env_or("HAMLE_CELL_MODEL", CELL_ONNX, CellModel::from_bytes))
            .as_ref()
            .map_err(|e| format!("cannot load the cell model: {e}"))
    }

    /// Loads an ONNX cell (or word) model: in two parts where it has `CELL_CUT`, else whole.
    pub fn from_bytes(bytes: &[u8]) -> TractResult<CellModel> {
        let onnx = tract_onnx::onnx();
        let proto = onnx.proto_model_for_read(&mut std::io::Cursor::new(bytes))?;
        let shape = CELL_INPUT;
        let Some((front, back)) = split_at_tensor(&proto, CELL_CUT) else {
            let plan = plan_for(bytes, shape)?;
            return Ok(CellModel {
                plans: CellPlans::Whole(plan),
            });
        };
        let conv = onnx
            .model_for_proto_model(&front)?
            .with_input_fact(0, f32::fact(shape).into())?
            .with_output_fact(0, Default::default())?
            .into_optimized()?
            .into_runnable()?;
        let out = conv
            .model()
            .output_fact(0)?
            .shape
            .as_concrete()
            .map(<[usize]>::to_vec);
        let Some(&[frames, 1, features]) = out.as_deref() else {
            bail!("the cell model's convolutions give {out:?}, not [frames, 1, features]");
        };
        let back = onnx.model_for_proto_model(&back)?;
        let batch = back.sym("B");
        let rnn = back
            .with_input_fact(
                0,
                f32::fact(&[frames.into(), TDim::from(batch), features.into()]).into(),
            )?
            .with_output_fact(0, Default::default())?
            .into_optimized()?
            .into_runnable()?;
        Ok(CellModel {
            plans: CellPlans::Split {
                conv,
                rnn,
                frames,
                features,
            },
        })
    }

    /// Runs the model on inputs of raw pixels (`CELL_H × CELL_W` values in 0..1, paper
    /// white each), in parallel. Inputs that fail come back as errors; the others are
    /// unaffected, and each reads the same whatever the others are, up to rounding.
    ///
    /// Each run of the recurrent layers gets a fresh plan state: tract keeps a recurrent
    /// layer's state from one run of a state to the next (it is built for streaming), so a
    /// state reused across cells reads each cell as the continuation of the one before.
    pub fn run_batch(&self, inputs: &[Vec<f32>]) -> Vec<Result<CellFrames, String>> {
        let err = |e: TractError| format!("{e:#}");
        let shape = CELL_INPUT;
        let (conv, rnn, frames, features) = match &self.plans {
            CellPlans::Whole(plan) => {
                return inputs
                    .par_iter()
                    .map(|px| {
                        let input = Tensor::from_shape(&shape, px).map_err(err)?;
                        let out = plan.spawn().and_then(|mut s| s.run(tvec!(input.into())));
                        frames_of(&out.map_err(err)?[0], 0, 1).map_err(err)
                    })
                    .collect();
            }
            CellPlans::Split {
                conv,
                rnn,
                frames,
                features,
            } => (conv, rnn, *frames, *features),
        };
        // The convolutions, cell by cell: `[T, C]` each.
        let feats: Vec<Result<Vec<f32>, String>> = inputs
            .par_iter()
            .map(|px| {
                let input = Tensor::from_shape(&shape, px).map_err(err)?;
                let out = conv
                    .spawn()
                    .and_then(|mut s| s.run(tvec!(input.into())))
                    .map_err(err)?;
                let view = out[0].to_plain_array_view::<f32>().map_err(err)?;
                Ok(view.iter().cloned().collect())
            })
            .collect();
        // The recurrent layers, up to RNN_BATCH cells a run (runs of even sizes), laid out
        // `[T, batch, C]`. A cell whose convolutions failed runs as zeros and comes back as
        // its error.
        let size = feats
            .len()
            .div_ceil(feats.len().div_ceil(RNN_BATCH).max(1))
            .max(1);
        feats
            .par_chunks(size)
            .flat_map_iter(|chunk| {
                let b = chunk.len();
                let mut x = vec![0.0f32; frames * b * features];
                for (j, f) in chunk.iter().enumerate() {
                    if let Ok(f) = f {
                        for (t, row) in f.chunks_exact(features).take(frames).enumerate() {
                            x[(t * b + j) * features..][..features].copy_from_slice(row);
                        }
                    }
                }
                let out = Tensor::from_shape(&[frames, b, features], &x)
                    .and_then(|input| rnn.spawn()?.run(tvec!(input.into())))
                    .map_err(err);
                chunk
                    .iter()
                    .enumerate()
                    .map(|(j, f)| {
                        f.as_ref().map_err(Clone::clone)?;
                        let out = out.as_ref().map_err(Clone::clone)?;
                        frames_of(&out[0], j, b).map_err(err)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Recognizes cell images (each resized to the model's input size beforehand), in
    /// parallel, as [`CellModel::run_batch`].
    pub fn run_cells(&self, cells: &[GrayImage]) -> Vec<Result<CellFrames, String>> {
        self.run_images(cells, pixels)
    }

    /// Runs the model on images turned into its input by `input`, [`IMAGE_BLOCK`] at a
    /// time, so that the inputs and the convolutions' frames held at once stay a few MB
    /// however many images (a book's words) come.
    fn run_images(
        &self,
        imgs: &[GrayImage],
        input: impl Fn(&GrayImage) -> Vec<f32> + Sync,
    ) -> Vec<Result<CellFrames, String>> {
        imgs.chunks(IMAGE_BLOCK)
            .flat_map(|block| {
                let inputs: Vec<Vec<f32>> = block.par_iter().map(&input).collect();
                self.run_batch(&inputs)
            })
            .collect()
    }
}

/// Item `j` of a `[T, batch, K]` output of log-probabilities.
fn frames_of(t: &TValue, j: usize, batch: usize) -> TractResult<CellFrames> {
    let view = t.to_plain_array_view::<f32>()?;
    let shape = view.shape().to_vec();
    let &[frames, b, classes] = shape.as_slice() else {
        bail!("the cell model gives {shape:?}, not [frames, batch, classes]");
    };
    if b != batch || j >= b {
        bail!("the cell model gives a batch of {b}, not {batch}");
    }
    let flat = view
        .as_slice()
        .ok_or_else(|| anyhow!("the cell model's output is not contiguous"))?;
    let logp = (0..frames)
        .flat_map(|t| flat[(t * b + j) * classes..][..classes].iter().cloned())
        .collect();
    Ok(CellFrames {
        frames,
        classes,
        logp,
    })
}

/// An ONNX model cut in two at the tensor named `cut`: the nodes it needs (with the model's
/// inputs; `cut` is its output), and the rest (with `cut` as its input; the model's outputs).
/// `None` when no node makes `cut`.
fn split_at_tensor(
    proto: &tract_onnx::pb::ModelProto,
    cut: &str,
) -> Option<(tract_onnx::pb::ModelProto, tract_onnx::pb::ModelProto)> {
    use std::collections::{HashMap, HashSet};
    let graph = proto.graph.as_ref()?;
    let nodes = &graph.node;
    // Which node makes each tensor (weights and inputs are made by none).
    let made_by: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let maker = *made_by.get(cut)?;
    // The front: `cut`'s maker and what it needs, back to the inputs.
    let mut front = vec![false; nodes.len()];
    let mut need = vec![maker];
    while let Some(i) = need.pop() {
        if !std::mem::replace(&mut front[i], true) {
            need.extend(
                nodes[i]
                    .input
                    .iter()
                    .filter_map(|t| made_by.get(t.as_str())),
            );
        }
    }
    // The back: every other node, plus front nodes whose outputs other nodes still read
    // (constants shared across the cut), back to what they need. If that reaches the
    // model's inputs, the model does not split at `cut`.
    let mut back: Vec<bool> = front.iter().map(|f| !f).collect();
    let mut changed = true;
    while changed {
        changed = false;
        let read: HashSet<&str> = nodes
            .iter()
            .zip(&back)
            .filter(|(_, &b)| b)
            .flat_map(|(n, _)| n.input.iter().map(String::as_str))
            .collect();
        for (i, n) in nodes.iter().enumerate() {
            if !back[i] && i != maker && n.output.iter().any(|o| read.contains(o.as_str())) {
                back[i] = true;
                changed = true;
            }
        }
    }
    let inputs: HashSet<&str> = graph.input.iter().map(|i| i.name.as_str()).collect();
    let back_reads_input = nodes
        .iter()
        .zip(&back)
        .any(|(n, &b)| b && n.input.iter().any(|i| inputs.contains(i.as_str())));
    if back_reads_input {
        return None;
    }
    use tract_onnx::pb::{
        tensor_proto::DataType, type_proto, GraphProto, ModelProto, NodeProto, TypeProto,
        ValueInfoProto,
    };
    let value = |name: &str| ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: None,
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    // Each part gets only its nodes and the weights they read: no copy of the whole model,
    // and no shapes recorded for the whole model's batch.
    let part = |keep: &[bool], input: Vec<ValueInfoProto>, output| {
        let node: Vec<NodeProto> = nodes
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(n, _)| n.clone())
            .collect();
        let read: HashSet<&str> = node
            .iter()
            .flat_map(|n| &n.input)
            .map(String::as_str)
            .collect();
        let initializer = graph
            .initializer
            .iter()
            .filter(|t| read.contains(t.name.as_str()))
            .cloned()
            .collect();
        ModelProto {
            ir_version: proto.ir_version,
            opset_import: proto.opset_import.clone(),
            graph: Some(GraphProto {
                name: graph.name.clone(),
                node,
                initializer,
                input,
                output,
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    let first = part(&front, graph.input.clone(), vec![value(cut)]);
    let second = part(&back, vec![value(cut)], graph.output.clone());
    Some((first, second))
}

/// The square classifier, ready to run (one crop at a time, see `CropPlan`).
pub struct SquareModel {
    plan: CropPlan,
}

/// Crops per tract run of the square and piece models (see `CropPlan`).
const CROP_RUN: usize = 1;
/// Crops per tract run of the coordinate model.
const COORD_RUN: usize = 16;

static SQUARE_MODEL: OnceLock<Result<SquareModel, String>> = OnceLock::new();

impl SquareModel {
    /// The embedded model (or the file named by `HAMLE_SQUARE_MODEL`, to compare a
    /// candidate without a rebuild), loaded on first use.
    ///
    /// # Errors
    ///
    /// The model does not load (for the embedded one a build problem; a test checks it does).
    pub fn get() -> Result<&'static SquareModel, String> {
        SQUARE_MODEL
            .get_or_init(|| {
                let s = SQUARE_S as usize;
                CropPlan::load("HAMLE_SQUARE_MODEL", SQUARE_ONNX, CROP_RUN, [1, s, s])
                    .map(|plan| SquareModel { plan })
            })
            .as_ref()
            .map_err(|e| format!("cannot load the square model: {e}"))
    }

    /// Loads an ONNX square model (exported at a batch of 64, planned one crop at a time).
    ///
    /// # Errors
    ///
    /// The bytes are not a model tract can load and plan at that input shape.
    pub fn from_bytes(bytes: &[u8]) -> TractResult<SquareModel> {
        let s = SQUARE_S as usize;
        let plan = CropPlan::from_bytes(bytes, CROP_RUN, [1, s, s])?;
        Ok(SquareModel { plan })
    }

    /// Logits of one board: `pixels` holds the 64 crops (`64 × 32 × 32` values in 0..1,
    /// crop after crop, row-major); returns 64 rows of [`SQUARE_CLASSES`] logits.
    ///
    /// # Errors
    ///
    /// `pixels` has the wrong length, or tract fails.
    pub fn run_board(&self, pixels: &[f32]) -> TractResult<Vec<[f32; SQUARE_CLASSES]>> {
        let s = SQUARE_S as usize;
        check_len(pixels, SQUARE_BATCH * s * s)?;
        self.plan.run(pixels)
    }

    /// Logits of any number of crops (each `32 × 32` values in 0..1), one row per crop.
    ///
    /// # Errors
    ///
    /// `pixels` is not a whole number of crops, or tract fails.
    pub fn run_crops(&self, pixels: &[f32]) -> TractResult<Vec<[f32; SQUARE_CLASSES]>> {
        self.plan.run(pixels)
    }
}

/// An error unless `pixels` holds exactly `want` values.
fn check_len(pixels: &[f32], want: usize) -> TractResult<()> {
    if pixels.len() == want {
        Ok(())
    } else {
        Err(anyhow!(
            "{} input values where one board takes {want}",
            pixels.len()
        ))
    }
}

/// The corner model's output maps for one photo.
#[derive(Debug, Clone)]
pub struct CornerMaps {
    /// `4 × n × n`, row-major per map.
    pub data: Vec<f32>,
    /// Side of a map: the model's input side / [`CORNER_CELL`].
    pub n: usize,
}

impl CornerMaps {
    fn at(&self, ch: usize, y: usize, x: usize) -> f32 {
        self.data[(ch * self.n + y) * self.n + x]
    }

    /// Up to `k` local maxima (3 × 3) of map `ch` (0 corners, 1 lattice points) whose
    /// probability is at least `min`, strongest first, in the model's input pixels.
    pub fn peaks(&self, ch: usize, min: f32, k: usize) -> Vec<crate::board::physical::Peak> {
        let n = self.n;
        let logit_min = (min / (1.0 - min)).ln();
        let mut out = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let v = self.at(ch, y, x);
                if v.is_nan() || v < logit_min {
                    continue;
                }
                let mut is_max = true;
                'nb: for dy in -1i32..=1 {
                    for dx in -1i32..=1 {
                        let (yy, xx) = (y as i32 + dy, x as i32 + dx);
                        if (dy, dx) == (0, 0)
                            || yy < 0
                            || xx < 0
                            || yy >= n as i32
                            || xx >= n as i32
                        {
                            continue;
                        }
                        let w = self.at(ch, yy as usize, xx as usize);
                        // ties: the first in scan order wins
                        if w > v || (w == v && (yy, xx) < (y as i32, x as i32)) {
                            is_max = false;
                            break 'nb;
                        }
                    }
                }
                if !is_max {
                    continue;
                }
                let cell = CORNER_CELL as f64;
                let ox = f64::from(self.at(2, y, x)).clamp(-0.5, 0.5);
                let oy = f64::from(self.at(3, y, x)).clamp(-0.5, 0.5);
                out.push(crate::board::physical::Peak {
                    x: (x as f64 + 0.5 + ox) * cell,
                    y: (y as f64 + 0.5 + oy) * cell,
                    p: 1.0 / (1.0 + (-v).exp()),
                });
            }
        }
        out.sort_by(|a, b| b.p.total_cmp(&a.p));
        out.truncate(k);
        out
    }
}

/// The corner model, ready to run.
pub struct CornerModel {
    plan: Plan,
    /// Input side: the photo is resized to `side × side`.
    pub side: u32,
}

static CORNER_MODEL: OnceLock<Result<CornerModel, String>> = OnceLock::new();
static CORNER2D_MODEL: OnceLock<Result<CornerModel, String>> = OnceLock::new();

impl CornerModel {
    /// The embedded model, loaded on first use (`HAMLE_CORNER_MODEL=PATH` loads a candidate
    /// instead).
    ///
    /// # Errors
    ///
    /// The model does not load.
    pub fn get() -> Result<&'static CornerModel, String> {
        CornerModel::load(
            &CORNER_MODEL,
            "HAMLE_CORNER_MODEL",
            CORNER3D_ONNX,
            CORNER_IN,
        )
        .map_err(|e| format!("cannot load the corner model: {e}"))
    }

    /// The embedded corner model for diagrams ([`CORNER2D_ONNX`]), loaded on first use
    /// (`HAMLE_CORNER2D_MODEL=PATH` loads a candidate instead).
    ///
    /// # Errors
    ///
    /// The model does not load.
    pub fn get_2d() -> Result<&'static CornerModel, String> {
        CornerModel::load(
            &CORNER2D_MODEL,
            "HAMLE_CORNER2D_MODEL",
            CORNER2D_ONNX,
            CORNER2D_IN,
        )
        .map_err(|e| format!("cannot load the diagram corner model: {e}"))
    }

    /// The model in `cell`, loaded on first use from `$var` or `embedded`, for a
    /// `side × side` input.
    fn load(
        cell: &'static OnceLock<Result<CornerModel, String>>,
        var: &str,
        embedded: &[u8],
        side: u32,
    ) -> Result<&'static CornerModel, &'static String> {
        cell.get_or_init(|| {
            let n = side as usize;
            load_env_or(var, embedded, [1, 3, n, n]).map(|plan| CornerModel { plan, side })
        })
        .as_ref()
    }

    /// Runs the model on a photo already resized to `side × side`.
    ///
    /// # Errors
    ///
    /// The image has the wrong size, or tract fails.
    pub fn run(&self, img: &image::RgbImage) -> TractResult<CornerMaps> {
        let n = self.side as usize;
        if img.width() as usize != n || img.height() as usize != n {
            return Err(anyhow!("corner model input must be {n} x {n}"));
        }
        let mut px = vec![0.0f32; 3 * n * n];
        for (i, p) in img.pixels().enumerate() {
            for c in 0..3 {
                px[c * n * n + i] = p[c] as f32 / 255.0;
            }
        }
        let input = Tensor::from_shape(&[1, 3, n, n], &px)?;
        let mut state = self.plan.spawn()?;
        let out = state.run(tvec!(input.into_tvalue()))?;
        let view = out[0].to_plain_array_view::<f32>()?;
        let data: Vec<f32> = view.iter().cloned().collect();
        let out_n = n / CORNER_CELL;
        if data.len() != 4 * out_n * out_n {
            return Err(anyhow!("corner model gave {} values", data.len()));
        }
        Ok(CornerMaps { data, n: out_n })
    }
}

/// The piece classifier for photos of sets, ready to run (one crop at a time, see
/// `CropPlan`).
pub struct PieceModel {
    plan: CropPlan,
}

static PIECE_MODEL: OnceLock<Result<PieceModel, String>> = OnceLock::new();

impl PieceModel {
    /// The embedded model, loaded on first use (`HAMLE_PIECE_MODEL=PATH` loads a candidate
    /// instead).
    ///
    /// # Errors
    ///
    /// The model does not load.
    pub fn get() -> Result<&'static PieceModel, String> {
        PIECE_MODEL
            .get_or_init(|| {
                let crop = [3, PIECE_H as usize, PIECE_W as usize];
                CropPlan::load("HAMLE_PIECE_MODEL", PIECE3D_ONNX, CROP_RUN, crop)
                    .map(|plan| PieceModel { plan })
            })
            .as_ref()
            .map_err(|e| format!("cannot load the piece model: {e}"))
    }

    /// Logits of one board: `pixels` holds the 64 crops (RGB planes, crop after crop).
    ///
    /// # Errors
    ///
    /// `pixels` has the wrong length, or tract fails.
    pub fn run_board(&self, pixels: &[f32]) -> TractResult<Vec<[f32; SQUARE_CLASSES]>> {
        check_len(pixels, SQUARE_BATCH * 3 * (PIECE_H * PIECE_W) as usize)?;
        self.plan.run(pixels)
    }

    /// [`Self::run_board`] on the crops and on their mirror images (left to right), the two
    /// logits averaged: a piece in a mirror is the same piece, and the model was trained
    /// with mirrored crops. Session 16: 80.3 -> 80.5 % of the test renders' squares, 68.5
    /// -> 69.4 % of the labelled real photos'.
    ///
    /// # Errors
    ///
    /// As [`Self::run_board`].
    pub fn read_board(&self, pixels: &[f32]) -> TractResult<Vec<[f32; SQUARE_CLASSES]>> {
        let mut out = self.run_board(pixels)?;
        let mut mirrored = pixels.to_vec();
        for row in mirrored.chunks_exact_mut(PIECE_W as usize) {
            row.reverse();
        }
        for (o, m) in out.iter_mut().zip(self.run_board(&mirrored)?) {
            for (a, b) in o.iter_mut().zip(m) {
                *a = 0.5 * (*a + b);
            }
        }
        Ok(out)
    }
}

/// The board-level reader for photos of sets, see `models/board3d.md`: one board's
/// tempered piece logits in canonical order (`[1, 13, 8, 8]`, row 0 = rank 8, column 0 = file
/// a) in, the squares' class log-odds out, in the same layout.
pub const BOARD3D_ONNX: &[u8] = include_bytes!("../models/board3d.onnx");

/// The board-level reader for photos of sets ([`BOARD3D_ONNX`]), ready to run.
pub struct Board3dModel {
    plan: Plan,
}

static BOARD3D_MODEL: OnceLock<Result<Board3dModel, String>> = OnceLock::new();

impl Board3dModel {
    /// The embedded model, loaded on first use (`HAMLE_BOARD3D_MODEL=PATH` loads a candidate
    /// instead).
    ///
    /// # Errors
    ///
    /// The model does not load.
    pub fn get() -> Result<&'static Board3dModel, String> {
        BOARD3D_MODEL
            .get_or_init(|| {
                load_env_or(
                    "HAMLE_BOARD3D_MODEL",
                    BOARD3D_ONNX,
                    [1, SQUARE_CLASSES, 8, 8],
                )
                .map(|plan| Board3dModel { plan })
            })
            .as_ref()
            .map_err(|e| format!("cannot load the board model: {e}"))
    }

    /// Runs the model on 64 canonical rows of tempered logits (a8 first).
    ///
    /// # Errors
    ///
    /// tract fails.
    pub fn run(
        &self,
        canonical: &[[f32; SQUARE_CLASSES]],
    ) -> TractResult<Vec<[f32; SQUARE_CLASSES]>> {
        if canonical.len() != 64 {
            return Err(anyhow!("{} squares where a board has 64", canonical.len()));
        }
        let mut px = vec![0.0f32; SQUARE_CLASSES * 64];
        for (i, row) in canonical.iter().enumerate() {
            for (k, v) in row.iter().enumerate() {
                px[k * 64 + i] = *v;
            }
        }
        let input = Tensor::from_shape(&[1, SQUARE_CLASSES, 8, 8], &px)?;
        let out = self.plan.spawn()?.run(tvec!(input.into_tvalue()))?;
        let flat: Vec<f32> = out[0]
            .to_plain_array_view::<f32>()?
            .iter()
            .cloned()
            .collect();
        if flat.len() != SQUARE_CLASSES * 64 {
            return Err(anyhow!("the board model gave {} values", flat.len()));
        }
        Ok((0..64)
            .map(|i| std::array::from_fn(|k| flat[k * 64 + i]))
            .collect())
    }
}

/// The printed-coordinate reader, ready to run (in batches of 16, see `CropPlan`).
pub struct CoordModel {
    plan: CropPlan,
}

static COORD_MODEL: OnceLock<Result<CoordModel, String>> = OnceLock::new();

impl CoordModel {
    /// The embedded model, loaded on first use (`HAMLE_COORD_MODEL=PATH` loads a candidate
    /// instead).
    ///
    /// # Errors
    ///
    /// The model does not load.
    pub fn get() -> Result<&'static CoordModel, String> {
        COORD_MODEL
            .get_or_init(|| {
                let crop = [1, COORD_S, COORD_S];
                CropPlan::load("HAMLE_COORD_MODEL", COORD_ONNX, COORD_RUN, crop)
                    .map(|plan| CoordModel { plan })
            })
            .as_ref()
            .map_err(|e| format!("cannot load the coordinate model: {e}"))
    }

    /// Logits of the 64 crops (`64 × COORD_S²` values, crop after crop).
    ///
    /// # Errors
    ///
    /// `pixels` has the wrong length, or tract fails.
    pub fn run(&self, pixels: &[f32]) -> TractResult<Vec<[f32; COORD_CLASSES]>> {
        check_len(pixels, COORD_BATCH * COORD_S * COORD_S)?;
        self.plan.run(pixels)
    }
}

/// An ONNX file named by the environment variable `var` when set (to compare a candidate
/// model without a rebuild), else the embedded bytes, planned at `shape`.
fn load_env_or(var: &str, embedded: &[u8], shape: [usize; 4]) -> Result<Plan, String> {
    env_or(var, embedded, |b| plan_for(b, shape))
}

/// `load` of the ONNX file named by the environment variable `var` when set, else of the
/// embedded bytes.
fn env_or<T>(
    var: &str,
    embedded: &[u8],
    load: impl Fn(&[u8]) -> TractResult<T>,
) -> Result<T, String> {
    match std::env::var_os(var) {
        Some(path) => std::fs::read(&path)
            .map_err(|e| format!("{}: {e}", path.to_string_lossy()))
            .and_then(|b| load(&b).map_err(|e| format!("{e:#}"))),
        None => load(embedded).map_err(|e| format!("{e:#}")),
    }
}

/// A `[rows, K]` output (one board's crops, `K` classes each) as rows.
fn logit_rows<const K: usize>(t: &TValue, rows: usize) -> TractResult<Vec<[f32; K]>> {
    let view = t.to_plain_array_view::<f32>()?;
    let flat: Vec<f32> = view.iter().cloned().collect();
    if flat.len() != rows * K {
        return Err(anyhow!("the model gave {} values", flat.len()));
    }
    Ok(flat
        .chunks_exact(K)
        .map(|c| {
            let mut row = [0.0; K];
            row.copy_from_slice(c);
            row
        })
        .collect())
}

/// The printed-word recognizer, ready to run.
pub struct WordModel {
    cells: CellModel,
}

static WORD_MODEL: OnceLock<Result<WordModel, String>> = OnceLock::new();

impl WordModel {
    /// The embedded model, loaded on first use.
    ///
    /// # Errors
    ///
    /// The embedded model does not load (a build problem; a test checks it does).
    pub fn get() -> Result<&'static WordModel, String> {
        WORD_MODEL
            .get_or_init(|| {
                CellModel::from_bytes(WORD_ONNX)
                    .map(|cells| WordModel { cells })
                    .map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|e| format!("cannot load the word model: {e}"))
    }

    /// Reads word crops (each the word's ink box plus 2 pixels a side, as cut from the
    /// page), in parallel: the greedy reading of each and its confidence, the lowest of its
    /// frames' best probabilities (a word unlike any the model learned — prose, a name —
    /// has some frame it is unsure of).
    pub fn read(&self, crops: &[GrayImage]) -> Vec<Result<(String, f32), String>> {
        self.cells
            .run_images(crops, word_pixels)
            .into_iter()
            .map(|f| f.map(|f| (f.greedy_in(WORD_ALPHABET), f.min_frame_prob())))
            .collect()
    }
}

/// Word model input (`scripts/words_synth.py`): the crop scaled to height 32 keeping its
/// aspect (bilinear); wider than 128 it is squeezed to 128 × 32, else set at the left of a
/// white 128 × 32 canvas; grey levels scaled to 0..1.
pub fn word_pixels(img: &GrayImage) -> Vec<f32> {
    use crate::vision::resize;
    let (w, h) = (img.width().max(1), img.height().max(1));
    let scaled_w = ((w as f32 * CELL_H as f32 / h as f32).round() as u32).max(1);
    let canvas = if scaled_w > CELL_W {
        resize(img, CELL_W, CELL_H)
    } else {
        let r = resize(img, scaled_w, CELL_H);
        let mut c = GrayImage::from_pixel(CELL_W, CELL_H, image::Luma([255]));
        image::imageops::replace(&mut c, &r, 0, 0);
        c
    };
    canvas.as_raw().iter().map(|&p| p as f32 / 255.0).collect()
}

/// Model input from a cell image: grey levels scaled to 0..1.
pub fn pixels(img: &GrayImage) -> Vec<f32> {
    let resized;
    let img = if img.width() != CELL_W || img.height() != CELL_H {
        resized = crate::vision::resize(img, CELL_W, CELL_H);
        &resized
    } else {
        img
    };
    img.as_raw().iter().map(|&p| p as f32 / 255.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tract's output matches PyTorch's on the reference input saved at export time.
    #[test]
    fn tract_matches_pytorch() {
        check_pair(
            CellModel::get().expect("cell model loads"),
            include_str!("../models/cells.check-in.txt"),
            include_str!("../models/cells.check-out.txt"),
            CELL_ALPHABET,
        );
        check_pair(
            &WordModel::get().expect("word model loads").cells,
            include_str!("../models/words.check-in.txt"),
            include_str!("../models/words.check-out.txt"),
            WORD_ALPHABET,
        );
    }

    /// The coordinate reader: tract's logits on the 64 crops saved at export time (a mosaic,
    /// 8 per row) are PyTorch's.
    #[test]
    fn coordinate_model_matches_pytorch() {
        let mosaic = image::load_from_memory(include_bytes!("../models/coords.check-in.png"))
            .unwrap()
            .to_luma8();
        let n = COORD_S;
        let mut px = vec![0.0f32; COORD_BATCH * n * n];
        for i in 0..COORD_BATCH {
            let (r, c) = (i / 8, i % 8);
            for y in 0..n {
                for x in 0..n {
                    px[(i * n + y) * n + x] =
                        mosaic.get_pixel((c * n + x) as u32, (r * n + y) as u32)[0] as f32 / 255.0;
                }
            }
        }
        let got = CoordModel::get().unwrap().run(&px).unwrap();
        let worst = worst_difference(&got, include_str!("../models/coords.check-out.txt"));
        assert!(worst < 2e-3, "largest coordinate logit difference {worst}");
    }

    /// The largest difference between a board model's logit rows and the PyTorch logits
    /// saved at export (one value per line, as many as the rows hold).
    fn worst_difference<const K: usize>(got: &[[f32; K]], want: &str) -> f32 {
        let want = values(want);
        assert_eq!(want.len(), got.len() * K);
        got.iter()
            .flatten()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max)
    }

    /// The two models for photos of sets: tract's output on the input saved at export time
    /// is PyTorch's (the corner maps sampled every 97th value; all 64 × 13 piece logits).
    #[test]
    fn photo_models_match_pytorch() {
        let img = image::load_from_memory(include_bytes!("../models/corners3d.check-in.png"))
            .unwrap()
            .to_rgb8();
        let maps = CornerModel::get().unwrap().run(&img).unwrap();
        let want = values(include_str!("../models/corners3d.check-out.txt"));
        assert_eq!(want.len(), maps.data.len().div_ceil(97));
        for (k, w) in want.iter().enumerate() {
            let got = maps.data[k * 97];
            assert!((got - w).abs() < 2e-3, "corner map value {k}: {got} vs {w}");
        }
        let img = image::load_from_memory(include_bytes!("../models/corners2d.check-in.png"))
            .unwrap()
            .to_rgb8();
        let maps = CornerModel::get_2d().unwrap().run(&img).unwrap();
        assert_eq!(maps.n, CORNER2D_IN as usize / CORNER_CELL);
        let want = values(include_str!("../models/corners2d.check-out.txt"));
        assert_eq!(want.len(), maps.data.len().div_ceil(97));
        for (k, w) in want.iter().enumerate() {
            let got = maps.data[k * 97];
            assert!(
                (got - w).abs() < 2e-3,
                "diagram corner map value {k}: {got} vs {w}"
            );
        }
        let mosaic = image::load_from_memory(include_bytes!("../models/pieces3d.check-in.png"))
            .unwrap()
            .to_rgb8();
        let (w, h) = (PIECE_W as usize, PIECE_H as usize);
        let mut px = vec![0.0f32; 64 * 3 * w * h];
        for i in 0..64 {
            let (r, c) = (i / 8, i % 8);
            for y in 0..h {
                for x in 0..w {
                    let p = mosaic.get_pixel((c * w + x) as u32, (r * h + y) as u32);
                    for ch in 0..3 {
                        px[((i * 3 + ch) * h + y) * w + x] = p[ch] as f32 / 255.0;
                    }
                }
            }
        }
        let got = PieceModel::get().unwrap().run_board(&px).unwrap();
        let worst = worst_difference(&got, include_str!("../models/pieces3d.check-out.txt"));
        assert!(worst < 2e-3, "largest piece logit difference {worst}");
        // Reading the board with its mirror: the mirrored crops read the same, and the
        // reading is the mean of the model's two.
        let mut mirrored = px.clone();
        for row in mirrored.chunks_exact_mut(w) {
            row.reverse();
        }
        let m = PieceModel::get().unwrap();
        let (a, b) = (m.read_board(&px).unwrap(), m.read_board(&mirrored).unwrap());
        let back = m.run_board(&mirrored).unwrap();
        for i in 0..64 {
            for k in 0..SQUARE_CLASSES {
                assert!((a[i][k] - b[i][k]).abs() < 1e-4, "crop {i} class {k}");
                assert!((a[i][k] - 0.5 * (got[i][k] + back[i][k])).abs() < 1e-4);
            }
        }
        assert!(m.read_board(&px[..100]).is_err());
    }

    /// tract's output on a saved input is PyTorch's (within 2e-3), with one class per letter
    /// of `alphabet` plus the blank.
    fn check_pair(m: &CellModel, input: &str, output: &str, alphabet: &str) {
        let (input, want) = (values(input), values(output));
        let got = m.run_batch(&[input]).remove(0).unwrap();
        assert_eq!(got.logp.len(), want.len());
        assert_eq!(got.classes, alphabet.chars().count() + 1);
        let worst = got
            .logp
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-3, "largest difference {worst}");
    }

    /// The word model reads a word drawn here roughly as a printed move (its letters are
    /// blocks, so only the shape of the output is checked), and never panics on odd crops.
    #[test]
    fn word_crops_of_any_shape() {
        let m = WordModel::get().unwrap();
        let crops = [
            GrayImage::from_pixel(1, 1, image::Luma([255])),
            GrayImage::from_pixel(400, 20, image::Luma([40])),
            GrayImage::from_pixel(30, 60, image::Luma([200])),
        ];
        for r in m.read(&crops) {
            let (text, conf) = r.unwrap();
            assert!(text.chars().all(|c| WORD_ALPHABET.contains(c)), "{text}");
            assert!((0.0..=1.0).contains(&conf));
        }
        assert_eq!(word_pixels(&crops[1]).len(), (CELL_W * CELL_H) as usize);
    }

    /// Reading cells together gives what reading each alone gives (no state leaks from one
    /// cell into the next).
    #[test]
    fn cells_are_read_independently() {
        let m = CellModel::get().unwrap();
        let imgs: Vec<GrayImage> = (0..12u32)
            .map(|i| {
                GrayImage::from_fn(CELL_W, CELL_H, |x, y| {
                    let ink = (x / 9 + y / 5 + i) % 3 == 0
                        && (10..22).contains(&y)
                        && (20..100).contains(&x);
                    image::Luma([if ink { 30 } else { 240 }])
                })
            })
            .collect();
        // 12 cells: two runs of 6 through the recurrent layers. A state carried from one
        // cell into the next would move outputs by far more than rounding.
        let together = m.run_cells(&imgs);
        // The model whole, one cell at a time (as older exports run).
        let shape = CELL_INPUT;
        let whole = CellModel {
            plans: CellPlans::Whole(plan_for(CELL_ONNX, shape).unwrap()),
        };
        let by_whole = whole.run_cells(&imgs);
        for ((img, t), w) in imgs.iter().zip(&together).zip(&by_whole) {
            let alone = &m.run_cells(std::slice::from_ref(img))[0];
            let t = &t.as_ref().unwrap().logp;
            for other in [&alone.as_ref().unwrap().logp, &w.as_ref().unwrap().logp] {
                assert_eq!(t.len(), other.len());
                let worst = t
                    .iter()
                    .zip(other)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f32::max);
                assert!(worst < 1e-4, "largest difference {worst}");
            }
        }
        assert!(split_at_tensor(
            &tract_onnx::onnx()
                .proto_model_for_read(&mut std::io::Cursor::new(CELL_ONNX))
                .unwrap(),
            "no such tensor"
        )
        .is_none());
    }

    #[test]
    fn blank_cell_reads_nothing_much() {
        let m = CellModel::get().unwrap();
        let blank = GrayImage::from_pixel(CELL_W, CELL_H, image::Luma([250]));
        let out = m.run_cells(&[blank]);
        let f = out[0].as_ref().unwrap();
        assert_eq!(f.frames, 32);
        assert!(f.greedy().chars().count() <= 1, "{}", f.greedy());
    }
    /// One value per line, as the check files are written.
    fn values(text: &str) -> Vec<f32> {
        text.lines().map(|l| l.trim().parse().unwrap()).collect()
    }

    /// The board-level model for photos of sets: tract matches PyTorch (onnxruntime) on the
    /// logits of one validation board saved at export.
    #[test]
    fn board_model_matches_pytorch() {
        let input = values(include_str!("../models/board3d.check-in.txt"));
        assert_eq!(input.len(), SQUARE_CLASSES * 64);
        let rows: Vec<[f32; SQUARE_CLASSES]> = (0..64)
            .map(|i| std::array::from_fn(|k| input[k * 64 + i]))
            .collect();
        let got = Board3dModel::get().unwrap().run(&rows).unwrap();
        let want = values(include_str!("../models/board3d.check-out.txt"));
        let worst = (0..64)
            .flat_map(|i| (0..SQUARE_CLASSES).map(move |k| (i, k)))
            .map(|(i, k)| (got[i][k] - want[k * 64 + i]).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-3, "largest board logit difference {worst}");
        assert!(Board3dModel::get().unwrap().run(&rows[..10]).is_err());
    }

    /// The square model: tract matches PyTorch on the exported check pair.
    #[test]
    fn squares_tract_matches_pytorch() {
        let input = values(include_str!("../models/squares.check-in.txt"));
        let want = values(include_str!("../models/squares.check-out.txt"));
        let m = SquareModel::get().expect("model loads");
        let got: Vec<f32> = m.run_board(&input).unwrap().concat();
        assert_eq!(got.len(), want.len());
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-3, "largest difference {worst}");
        assert!(m.run_board(&input[..100]).is_err());
        // a board is 64 crops, no fewer
        assert!(m.run_board(&input[..32 * 32 * 10]).is_err());
    }

    /// Crops planned at any batch, in any number, read as in the exported batch of 64: the
    /// last short chunk is padded and its padding dropped.
    #[test]
    fn crops_read_the_same_in_any_batch() {
        let input = values(include_str!("../models/squares.check-in.txt"));
        let crop = 32 * 32;
        let board: Vec<[f32; SQUARE_CLASSES]> =
            SquareModel::get().unwrap().run_board(&input).unwrap();
        for batch in [1, 8, 64] {
            let plan = CropPlan::from_bytes(SQUARE_ONNX, batch, [1, 32, 32]).unwrap();
            // crops 5..16: a whole chunk of 8 and a short one
            let got: Vec<[f32; SQUARE_CLASSES]> = plan.run(&input[5 * crop..16 * crop]).unwrap();
            assert_eq!(got.len(), 11, "batch {batch}");
            for (g, w) in got.iter().zip(&board[5..16]) {
                for (a, b) in g.iter().zip(w) {
                    assert!((a - b).abs() < 1e-4, "batch {batch}: {a} vs {b}");
                }
            }
            assert!(plan.run::<SQUARE_CLASSES>(&input[..crop + 7]).is_err());
            assert!(plan.run::<SQUARE_CLASSES>(&[]).unwrap().is_empty());
        }
    }
}
