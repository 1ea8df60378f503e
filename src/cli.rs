//! The command line: clap definitions, the validated configuration built from them, and
//! the glue that runs each command over the library.
//!
//! Two levels, as ripgrep does it: the clap structs ([`Cli`] and the `*Args`) are raw
//! values checked without I/O; [`RepairConfig`] is built from them once parsing is done.
//! [`run`] does the I/O (files, stdin, stdout, stderr messages) and returns the exit code;
//! the pipeline itself lives in the library (`hamle::input`, `hamle::decode`,
//! `hamle::output`). `anyhow` is used here and nowhere in the library.
//!
//! Commands: `read`, `sheet`, `board`, `repair`, `batch` and the `eval` reports. The
//! pipelines are the library's (`hamle::read`, `hamle::batch`, …); this file only picks the
//! configuration, prints, and shows a batch's progress (an `indicatif` bar on a terminal).
//!
//! Exit codes: 0 every input read; 1 some input failed (each failure on stderr as
//! `hamle: NAME: message`, the other inputs still written); 2 usage error (clap's). A
//! closed stdout (broken pipe) counts as success.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use hamle::decode::{repair_text, DecodeConfig};
use hamle::eval::RepairEvalOptions;
use hamle::input::{read_text, Encoding, DEFAULT_MAX_BYTES};
use hamle::notation::{lang, Lang, LANGS};
use hamle::output::Format;
use hamle::record::Game;
use hamle::sheet::SheetConfig;

/// Exit code: some input failed.
const EXIT_FAILED: u8 = 1;

/// hamle: photos, scans and noisy move text of chess games into verified game records.
#[derive(Debug, Parser)]
#[command(name = "hamle", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Noisy move text (OCR output, book text, PGN) → the legal game it most likely means.
    Repair(RepairArgs),
    /// Accuracy reports on labelled data.
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
    /// Any file: scoresheet scans, board images, PDFs and multi-page TIFFs (every page), move
    /// text — each page read by what it holds.
    Read(ReadArgs),
    /// Scoresheet images (photos or scans) → the games written on them.
    Sheet(SheetArgs),
    /// Board images (diagrams, screenshots, photos of screens and pages) → the position as FEN.
    Board(BoardArgs),
    /// Many files, folders or PDFs → one PGN and one JSON file per input, in parallel,
    /// resumable, failures listed in OUTDIR/errors.jsonl.
    Batch(BatchArgs),
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Repair accuracy: games of PGN or `*.moves.txt` files, written in Turkish notation,
    /// corrupted with synthetic noise and read back.
    Repair(RepairEvalArgs),
    /// Scoresheet accuracy on a labelled folder (`NAME.png|jpg` beside `NAME.moves.txt`).
    Sheets(SheetsEvalArgs),
    /// Board accuracy on a labelled folder (`NAME.png|jpg` beside `NAME.fen`).
    Boards(BoardsEvalArgs),
    /// The piece model's training crops from labelled renders of physical sets.
    #[command(hide = true)]
    DumpPieces(DumpPiecesArgs),
}

/// `hamle read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Inputs: images (PNG, JPEG, TIFF, WebP), PDFs, move text.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output: `pgn` (games, and boards as positions with a FEN tag), `json` (one line per
    /// game or board, with `kind` and `page`), `fen` (boards only), `tr`, any other
    /// language code, or `text` (games in that notation, boards as FEN).
    #[arg(long, default_value = "pgn", ignore_case = true, value_parser = read_format_parser())]
    pub format: ReadFormat,

    /// Notation of scoresheets and move text: `auto` detects it per game.
    #[arg(long, default_value = "auto", ignore_case = true, value_parser = lang_parser())]
    pub lang: LangChoice,

    /// Beam width of the repair search (default: the engine's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,
}

/// `hamle read --format`: a game format, or `fen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFormat {
    Game(Format),
    Fen,
}

fn read_format_parser() -> impl TypedValueParser<Value = ReadFormat> {
    let names = ["pgn", "json", "text", "fen"]
        .into_iter()
        .chain(LANGS.iter().map(|l| l.code));
    PossibleValuesParser::new(names).map(|s| match Format::parse(&s) {
        Some(f) => ReadFormat::Game(f),
        None => ReadFormat::Fen,
    })
}

/// `hamle batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// Inputs: files and folders (walked, hidden entries left out).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Output folder: NAME.pgn and NAME.json per input, errors.jsonl, summary.json.
    #[arg(short = 'o', long = "out", value_name = "OUTDIR", required = true)]
    pub out: PathBuf,

    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,

    /// Skip inputs (and pages of documents) finished by an earlier run into OUTDIR.
    #[arg(long)]
    pub resume: bool,

    /// Notation of scoresheets and move text: `auto` detects it per game.
    #[arg(long, default_value = "auto", ignore_case = true, value_parser = lang_parser())]
    pub lang: LangChoice,

    /// Beam width of the repair search (default: the engine's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,
}

/// The readers' configuration for `read` and `batch`.
fn read_config(lang: LangChoice, beam: Option<u32>) -> hamle::read::ReadConfig {
    let mut cfg = hamle::read::ReadConfig {
        sheet: sheet_config(lang, beam),
        ..Default::default()
    };
    cfg.text.lang = lang.0;
    if let Some(b) = beam.and_then(|b| usize::try_from(b).ok()) {
        cfg.text.beam = b;
    }
    cfg
}

/// `hamle repair`.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// Input text files; `-` or none reads stdin.
    #[arg(value_name = "FILE|-")]
    pub files: Vec<PathBuf>,

    /// Notation of the input: `auto` detects it per game.
    #[arg(long, default_value = "auto", ignore_case = true, value_parser = lang_parser())]
    pub lang: LangChoice,

    /// Output: `pgn`, `json` (one line per game), `tr` (Turkish text), any other language
    /// code (text in that notation), or `text` (the notation the game was read in).
    #[arg(long, default_value = "pgn", ignore_case = true, value_parser = format_parser())]
    pub format: Format,

    /// Beam width of the repair search (default: the engine's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,

    /// The moves were written by hand by the players (a scoresheet typed out or read by
    /// OCR): confidences allow for players' slips of the pen (`Re3` written for Re1), so a
    /// corrected move is given less. The moves read are the same.
    #[arg(long)]
    pub hand: bool,

    /// Largest input read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES, hide_default_value = true)]
    pub max_bytes: u64,
}

/// `hamle sheet`.
#[derive(Debug, Args)]
pub struct SheetArgs {
    /// Scoresheet images (PNG, JPEG, TIFF, WebP).
    #[arg(required = true, value_name = "IMAGE")]
    pub images: Vec<PathBuf>,

    /// The opponent's copy of the same game (one IMAGE only): both are decoded jointly.
    #[arg(long, value_name = "IMAGE")]
    pub second: Option<PathBuf>,

    /// Notation written on the sheets: `auto` detects it per sheet.
    #[arg(long, default_value = "auto", ignore_case = true, value_parser = lang_parser())]
    pub lang: LangChoice,

    /// Output: `pgn`, `json` (one line per sheet, with each cell's box), `tr`, any other
    /// language code, or `text`.
    #[arg(long, default_value = "pgn", ignore_case = true, value_parser = format_parser())]
    pub format: Format,

    /// Beam width of the repair search (default: the engine's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,

    /// Also write every cell as the recognizer sees it, as `DIR/NAME-<move><w|b>.png`, and
    /// the zoomed view of a cell with small writing as `DIR/NAME-<move><w|b>-zoom.png`.
    #[arg(long, value_name = "DIR")]
    pub dump_cells: Option<PathBuf>,

    /// A photo of the board when the game ended (a physical set, or a diagram): the game read
    /// from the sheet is checked against it (a note, and `final_board` in JSON, list the
    /// squares that differ and the plies that last touched them).
    #[arg(long, value_name = "PHOTO")]
    pub final_board: Option<PathBuf>,

    /// What the final-board photo shows: `auto` reads it both as a diagram and as a set and
    /// uses the reading that agrees better with the game read from the sheet.
    #[arg(long, value_enum, default_value = "auto", ignore_case = true)]
    pub final_board_kind: KindArg,
}

/// `hamle eval sheets`.
#[derive(Debug, Args)]
pub struct SheetsEvalArgs {
    /// Folder of `NAME.png|jpg` images with `NAME.moves.txt` labels.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Notation written on the sheets: `auto` detects it per sheet.
    #[arg(long, default_value = "auto", ignore_case = true, value_parser = lang_parser())]
    pub lang: LangChoice,

    /// Beam width of the repair search (default: the engine's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Folder of photos of each game's final position (`NAME.jpg|png` for the sheet
    /// `NAME`): each sheet is read with its photo, as `hamle sheet --final-board` does.
    #[arg(long, value_name = "DIR")]
    pub final_boards: Option<PathBuf>,

    /// What the final-position photos show (as `hamle sheet --final-board-kind`).
    #[arg(long, value_enum, default_value = "auto", ignore_case = true)]
    pub final_board_kind: KindArg,

    /// Scale of the recognizer's log-likelihoods in the engine (default: the pipeline's).
    #[arg(long, hide = true)]
    pub ctc_weight: Option<f32>,

    /// Price of the text fallback; negative turns it off (default: the pipeline's).
    #[arg(long, hide = true, allow_hyphen_values = true)]
    pub text_price: Option<f32>,

    /// Ignore the opponent's copies (`NAME.second.png|jpg`) and read each sheet alone.
    #[arg(long)]
    pub no_second: bool,

    /// Largest reading cost still marked `ok` (default: the pipeline's).
    #[arg(long, hide = true)]
    pub ok_below: Option<f32>,

    /// Read a cell a second time, zoomed on its writing, when the writing is under this share
    /// of the cell's height (0: never; default: the pipeline's).
    #[arg(long, hide = true)]
    pub zoom_below: Option<f32>,

    /// ... only when the cell's greedy reading is less likely than this (default: the
    /// pipeline's).
    #[arg(long, hide = true)]
    pub zoom_unsure: Option<f32>,

    /// Decoder costs to override, for tuning: NAME=VALUE,... (names of `decode::Costs`).
    #[arg(long, hide = true, value_delimiter = ',', value_parser = parse_cost)]
    pub costs: Vec<(String, f32)>,
}

/// `hamle board --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BoardFormat {
    /// One full FEN per image.
    Fen,
    /// One JSON object per image (JSON Lines).
    Json,
}

/// `--side`: the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    W,
    B,
}

/// `--orientation`: the side at the bottom of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrientationArg {
    White,
    Black,
    /// White's side at the left edge of the image (a set photographed from the side).
    Left,
    /// White's side at the right edge.
    Right,
}

/// `--kind`: what the board images show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// A diagram first; a photo of a physical set when no diagram is found (unless the
    /// image is a light page: then no board) or the diagram reader is unsure of many
    /// squares (pieces standing up into the squares behind).
    Auto,
    /// Printed or on-screen diagrams, and photos of them.
    Diagram,
    /// Photos of physical sets (wooden or plastic pieces standing on a board).
    Physical,
}

impl KindArg {
    fn kind(self) -> hamle::board::BoardKind {
        match self {
            KindArg::Auto => hamle::board::BoardKind::Auto,
            KindArg::Diagram => hamle::board::BoardKind::Diagram,
            KindArg::Physical => hamle::board::BoardKind::Physical,
        }
    }
}

/// `hamle board`.
#[derive(Debug, Args)]
pub struct BoardArgs {
    /// Board images (PNG, JPEG, TIFF, WebP): a diagram, a page or screenshot with a board.
    #[arg(required = true, value_name = "IMAGE")]
    pub images: Vec<PathBuf>,

    /// Output: `fen` (one line per image) or `json` (one object per line).
    #[arg(long, value_enum, default_value = "fen", ignore_case = true)]
    pub format: BoardFormat,

    /// Side to move (default `w`, and the JSON says it was not given).
    #[arg(long, value_enum, ignore_case = true)]
    pub side: Option<SideArg>,

    /// Which side is at the bottom of the image (default: decided from printed coordinates
    /// when they are clear, else from the pieces).
    #[arg(long, value_enum, ignore_case = true)]
    pub orientation: Option<OrientationArg>,

    /// What the images show.
    #[arg(long, value_enum, default_value = "auto", ignore_case = true)]
    pub kind: KindArg,

    /// Ignore printed coordinates: only the pieces decide the orientation.
    #[arg(long)]
    pub no_coordinates: bool,
}

/// `hamle eval boards`.
#[derive(Debug, Args)]
pub struct BoardsEvalArgs {
    /// Folder of `NAME.png|jpg` images with `NAME.fen` labels.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// What the images show.
    #[arg(long, value_enum, default_value = "auto", ignore_case = true)]
    pub kind: KindArg,

    /// Ignore printed coordinates: only the pieces decide the orientation.
    #[arg(long)]
    pub no_coordinates: bool,
}

/// `hamle eval dump-pieces` (hidden): the piece model's training crops.
#[derive(Debug, Args)]
pub struct DumpPiecesArgs {
    /// Renders of `scripts/render_3d.py` (`NAME.jpg`, `NAME.json` with `corners`, `NAME.fen`).
    pub dir: PathBuf,
    /// Where the mosaics go (`NAME-K.png` beside `NAME-K.fen`).
    pub out: PathBuf,
    /// Corner error, standard deviation in squares.
    #[arg(long, default_value_t = 0.06)]
    pub jitter: f64,
    /// Mosaics per render, each with its own corner error.
    #[arg(long, default_value_t = 1)]
    pub copies: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Crops this many times the piece model's input (32 x 64) each way, for probes of a
    /// larger input (1 to 8).
    #[arg(long, default_value_t = 1)]
    pub crop_scale: u32,
}

impl BoardArgs {
    /// The library's configuration.
    pub fn config(&self) -> hamle::board::BoardConfig {
        hamle::board::BoardConfig {
            side: self.side.map(|s| match s {
                SideArg::W => shakmaty::Color::White,
                SideArg::B => shakmaty::Color::Black,
            }),
            orientation: self.orientation.map(|o| match o {
                OrientationArg::White => hamle::board::Orientation::White,
                OrientationArg::Black => hamle::board::Orientation::Black,
                OrientationArg::Left => hamle::board::Orientation::Left,
                OrientationArg::Right => hamle::board::Orientation::Right,
            }),
            kind: self.kind.kind(),
            coordinates: !self.no_coordinates,
            ..Default::default()
        }
    }
}

/// `--lang`: a language, or `None` for `auto`.
#[derive(Debug, Clone, Copy)]
pub struct LangChoice(pub Option<&'static Lang>);

fn lang_parser() -> impl TypedValueParser<Value = LangChoice> {
    let names = std::iter::once("auto").chain(LANGS.iter().map(|l| l.code));
    PossibleValuesParser::new(names).map(|s| LangChoice(lang(&s)))
}

fn format_parser() -> impl TypedValueParser<Value = Format> {
    let names = ["pgn", "json", "text"]
        .into_iter()
        .chain(LANGS.iter().map(|l| l.code));
    // Every name offered parses; the fallback is never taken.
    PossibleValuesParser::new(names).map(|s| Format::parse(&s).unwrap_or(Format::Pgn))
}

/// `hamle eval repair`.
#[derive(Debug, Args)]
pub struct RepairEvalArgs {
    /// PGN files, `*.moves.txt` label files, or folders holding them.
    #[arg(required = true, value_name = "DIR|FILE")]
    pub paths: Vec<PathBuf>,

    /// Noise levels (character error rates, 0..1), comma-separated or repeated.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [0.05f32, 0.10],
        value_parser = parse_rate
    )]
    pub noise: Vec<f32>,

    /// Seed of the noise generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Probability that a ply's text is dropped whole (default: the evaluator's).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub drop: Option<f32>,

    /// Probability that a ply is written as a slip of the pen: a wrong move, as players
    /// write them (`Re3` for Re1, `Bxg6` for Nxg6, `d7` for Qd7), before the character
    /// noise. The truth stays the move played (default 0).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub slips: Option<f32>,

    /// Decode with the calibration for moves written by hand (`hamle repair --hand`).
    #[arg(long)]
    pub hand: bool,

    /// Evaluate N games, evenly spaced over the corpus (default: all).
    #[arg(long, value_name = "N")]
    pub games: Option<usize>,

    /// Run language auto-detection on every game, not only on every tenth.
    #[arg(long)]
    pub auto_lang: bool,

    /// Decode with raw confidences and fit the per-status calibration on them (prints
    /// the triples for `decode::Calibration`).
    #[arg(long)]
    pub fit_calibration: bool,

    /// Beam width of the decoder (default: the decoder's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub beam: Option<u32>,

    /// Decoder costs to override, for tuning: NAME=VALUE,... (names of `decode::Costs`).
    #[arg(long, hide = true, value_delimiter = ',', value_parser = parse_cost)]
    pub costs: Vec<(String, f32)>,

    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn parse_cost(s: &str) -> Result<(String, f32), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let value: f32 = value.trim().parse().map_err(|e| format!("{e}"))?;
    hamle::decode::Costs::default().set(name.trim(), value)?;
    Ok((name.trim().to_string(), value))
}

fn parse_rate(s: &str) -> Result<f32, String> {
    let v: f32 = s.trim().parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a rate between 0 and 1"))
    }
}

/// One input of `repair`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    Path(PathBuf),
}

impl Input {
    /// The name used in messages and in the JSON `file` field: the path, or `-`.
    pub fn name(&self) -> String {
        match self {
            Input::Stdin => "-".to_string(),
            Input::Path(p) => p.display().to_string(),
        }
    }
}

/// `repair`'s validated configuration.
#[derive(Debug, Clone)]
pub struct RepairConfig {
    pub inputs: Vec<Input>,
    pub decode: DecodeConfig,
    pub format: Format,
    pub max_bytes: u64,
}

impl RepairConfig {
    pub fn new(args: RepairArgs) -> Self {
        let inputs = if args.files.is_empty() {
            vec![Input::Stdin]
        } else {
            args.files
                .into_iter()
                .map(|p| {
                    if p.as_os_str() == "-" {
                        Input::Stdin
                    } else {
                        Input::Path(p)
                    }
                })
                .collect()
        };
        let mut decode = DecodeConfig {
            lang: args.lang.0,
            ..Default::default()
        };
        if let Some(beam) = args.beam.and_then(|b| usize::try_from(b).ok()) {
            decode.beam = beam;
        }
        if args.hand {
            decode.costs.calibration = hamle::decode::Calibration::handwritten();
        }
        RepairConfig {
            inputs,
            decode,
            format: args.format,
            max_bytes: args.max_bytes,
        }
    }
}

/// Runs a parsed command line; the exit code on success.
///
/// # Errors
///
/// Writing the output failed (a broken pipe included; see [`is_broken_pipe`]). A failed
/// input is not an error: it is reported on stderr and makes the exit code 1.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Repair(args) => repair(&RepairConfig::new(args)),
        Command::Eval {
            command: EvalCommand::Repair(args),
        } => eval_repair(&args),
        Command::Eval {
            command: EvalCommand::Sheets(args),
        } => eval_sheets(&args),
        Command::Eval {
            command: EvalCommand::Boards(args),
        } => eval_boards(&args),
        Command::Eval {
            command: EvalCommand::DumpPieces(a),
        } => {
            let n = hamle::eval::boards::dump_pieces(
                &a.dir,
                &a.out,
                a.jitter,
                a.copies,
                a.seed,
                a.crop_scale,
            )?;
            eprintln!("{n} mosaics written to {}", a.out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Read(args) => read(&args),
        Command::Sheet(args) => sheet(&args),
        Command::Board(args) => board(&args),
        Command::Batch(args) => batch(&args),
    }
}

/// Whether `err` is a write to a closed pipe (`hamle … | head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// A message on stderr, prefixed `hamle: `. A closed stderr is ignored.
fn message(msg: &str) {
    let _ = writeln!(io::stderr().lock(), "hamle: {msg}");
}

fn eval_repair(args: &RepairEvalArgs) -> anyhow::Result<ExitCode> {
    let mut opts = RepairEvalOptions {
        paths: args.paths.clone(),
        noise: args.noise.clone(),
        seed: args.seed,
        games: args.games,
        auto_lang: args.auto_lang,
        fit_calibration: args.fit_calibration,
        hand: args.hand,
        beam: args.beam.map(|b| b as usize),
        costs: args.costs.clone(),
        ..Default::default()
    };
    if let Some(drop) = args.drop {
        opts.drop = drop;
    }
    if let Some(slips) = args.slips {
        opts.slips = slips;
    }
    let report = hamle::eval::run(&opts)?;
    print_report(&report, args.json)
}

/// Prints an eval report as one JSON line or as its text table.
fn print_report<R: serde::Serialize + std::fmt::Display>(
    report: &R,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut out = io::stdout().lock();
    if json {
        // To a string first: a serde_json error would hide a broken pipe from main.
        let line = serde_json::to_string(report)?;
        writeln!(out, "{line}")?;
    } else {
        write!(out, "{report}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn sheet_config(lang: LangChoice, beam: Option<u32>) -> SheetConfig {
    let mut cfg = SheetConfig::default();
    cfg.decode.lang = lang.0;
    if let Some(b) = beam.and_then(|b| usize::try_from(b).ok()) {
        cfg.decode.beam = b;
    }
    cfg
}

fn sheet(args: &SheetArgs) -> anyhow::Result<ExitCode> {
    if args.second.is_some() && args.images.len() != 1 {
        bail!("--second reads the opponent's copy of one game: give exactly one IMAGE with it");
    }
    if args.final_board.is_some() && args.images.len() != 1 {
        bail!("--final-board is the photo of one game's last position: give exactly one IMAGE with it");
    }
    let mut cfg = sheet_config(args.lang, args.beam);
    let mut photo_failed = None;
    if let Some(photo) = &args.final_board {
        let pname = photo.display().to_string();
        match hamle::sheet::final_board::read_photo(photo, args.final_board_kind.kind()) {
            Ok(b) => cfg.final_board = Some((b, pname)),
            Err(err) => {
                message(&format!("{pname}: {err}"));
                photo_failed = Some(format!(
                    "the final-board photo {pname} could not be read: {err}"
                ));
            }
        }
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = photo_failed.is_some();
    for path in &args.images {
        let name = path.display().to_string();
        if let Some(dir) = &args.dump_cells {
            if let Err(err) = dump_cells(path, dir, &cfg) {
                message(&format!("{name}: {err:#}"));
                failed = true;
                continue;
            }
        }
        let read = match &args.second {
            Some(second) => hamle::sheet::read_pair(path, second, &cfg),
            None => hamle::sheet::read_file(path, &cfg),
        };
        match read {
            Ok(mut r) => {
                if let Some(note) = &photo_failed {
                    r.game.notes.push(note.clone());
                }
                if args.format == Format::Json {
                    let mut v = hamle::output::json::sheet_value(&r, &name)?;
                    if let (Some(c), Some(o)) = (&r.final_board, v.as_object_mut()) {
                        o.insert("final_board".into(), serde_json::to_value(c)?);
                    }
                    let line = serde_json::to_string(&v)?;
                    writeln!(out, "{line}")?;
                } else {
                    args.format.write_game(&r.game, &name, &mut out)?;
                }
            }
            Err(err) => {
                out.flush()?;
                message(&format!("{name}: {err}"));
                failed = true;
            }
        }
    }
    finish(&mut out, failed)
}

/// Flushes the output; exit code 1 when some input failed.
fn finish(out: &mut impl Write, failed: bool) -> anyhow::Result<ExitCode> {
    out.flush()?;
    Ok(if failed {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

fn dump_cells(
    path: &std::path::Path,
    dir: &std::path::Path,
    cfg: &SheetConfig,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("sheet");
    for (b, img, _, zoom) in hamle::sheet::cell_images(path, cfg)? {
        let side = if b.side == hamle::sheet::Side::White {
            'w'
        } else {
            'b'
        };
        img.save(dir.join(format!("{stem}-{:03}{side}.png", b.number)))?;
        if let Some(z) = zoom {
            z.save(dir.join(format!("{stem}-{:03}{side}-zoom.png", b.number)))?;
        }
    }
    Ok(())
}

fn eval_sheets(args: &SheetsEvalArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = sheet_config(args.lang, args.beam);
    if let Some(w) = args.ctc_weight {
        cfg.ctc_weight = w;
    }
    if let Some(p) = args.text_price {
        cfg.text_price = (p >= 0.0).then_some(p);
    }
    if let Some(o) = args.ok_below {
        cfg.ok_below = o;
    }
    if let Some(z) = args.zoom_below {
        cfg.zoom_below = z;
    }
    if let Some(z) = args.zoom_unsure {
        cfg.zoom_unsure = z;
    }
    for (name, value) in &args.costs {
        cfg.decode
            .costs
            .set(name, *value)
            .map_err(anyhow::Error::msg)?;
    }
    let report = hamle::eval::sheets::run(
        &args.dir,
        &cfg,
        !args.no_second,
        args.final_boards
            .as_deref()
            .map(|d| (d, args.final_board_kind.kind())),
    )?;
    print_report(&report, args.json)
}

fn board(args: &BoardArgs) -> anyhow::Result<ExitCode> {
    let cfg = args.config();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = false;
    for path in &args.images {
        let name = path.display().to_string();
        match hamle::board::read_file(path, &cfg) {
            Ok(r) => match args.format {
                BoardFormat::Fen => {
                    writeln!(out, "{}", r.fen)?;
                    // the FEN line stays alone on stdout; what is doubtful goes to stderr
                    if !r.flags.is_empty() {
                        out.flush()?;
                        message(&format!("{name}: {}", r.flags.join("; ")));
                    }
                }
                BoardFormat::Json => {
                    let v = hamle::output::json::board_value(&r, &name)?;
                    let line = serde_json::to_string(&v)?;
                    writeln!(out, "{line}")?;
                }
            },
            Err(err) => {
                out.flush()?;
                message(&format!("{name}: {err}"));
                failed = true;
            }
        }
    }
    finish(&mut out, failed)
}

fn read(args: &ReadArgs) -> anyhow::Result<ExitCode> {
    let cfg = read_config(args.lang, args.beam);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = false;
    for path in &args.files {
        let name = path.display().to_string();
        let doc = match hamle::pages::open(path) {
            Ok(d) => d,
            Err(err) => {
                out.flush()?;
                message(&format!("{name}: {err}"));
                failed = true;
                continue;
            }
        };
        if hamle::book::is_book(&doc) {
            match hamle::read::read_book(&doc, &cfg) {
                Ok(content) => write_content(&content, &name, None, args.format, &mut out)?,
                Err(err) => {
                    out.flush()?;
                    message(&format!("{name}: {err}"));
                    failed = true;
                }
            }
            continue;
        }
        let multi = doc.pages() > 1;
        let mut found = 0usize;
        let mut last_err = None;
        // Pages in parallel, a few at a time, printed in order as each group is done.
        let group = 2 * rayon::current_num_threads();
        let indices: Vec<usize> = (0..doc.pages()).collect();
        for chunk in indices.chunks(group) {
            use rayon::prelude::*;
            let results: Vec<_> = chunk
                .par_iter()
                .map(|&i| hamle::read::read_document_page(&doc, i, &cfg))
                .collect();
            for (&i, r) in chunk.iter().zip(results) {
                let page = multi.then_some(i);
                match r {
                    Ok(content) => {
                        found += 1;
                        write_content(&content, &name, page, args.format, &mut out)?;
                    }
                    Err(err) => {
                        let at = page.map_or(String::new(), |p| format!(" page {}", p + 1));
                        if multi {
                            out.flush()?;
                            message(&format!("{name}{at}: {err}"));
                        }
                        last_err = Some(err);
                    }
                }
            }
        }
        if found == 0 {
            out.flush()?;
            if !multi {
                if let Some(err) = last_err {
                    message(&format!("{name}: {err}"));
                }
            } else {
                message(&format!("{name}: no page holds a game or a board"));
            }
            failed = true;
        }
    }
    finish(&mut out, failed)
}

/// Writes what a page held in the chosen format.
fn write_content(
    content: &hamle::read::Content,
    name: &str,
    page: Option<usize>,
    format: ReadFormat,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    use hamle::read::Content;
    match (format, content) {
        (ReadFormat::Game(Format::Json), _) => {
            for v in content.values(name, page)? {
                let line = serde_json::to_string(&v)?;
                writeln!(out, "{line}")?;
            }
        }
        (ReadFormat::Game(Format::Pgn), _) => write!(out, "{}", content.pgn(name, page))?,
        (_, Content::Board(b)) => writeln!(out, "{}", b.fen)?,
        (_, Content::Boards(bs)) => {
            for b in bs {
                writeln!(out, "{}", b.fen)?;
            }
        }
        (ReadFormat::Fen, Content::Book(book)) => {
            for d in &book.diagrams {
                writeln!(out, "{}", d.board.fen)?;
            }
        }
        (ReadFormat::Fen, _) => {
            let at = page.map_or(String::new(), |p| format!(" page {}", p + 1));
            message(&format!(
                "{name}{at}: holds a game, not a board; --format fen prints boards only"
            ));
        }
        (ReadFormat::Game(f), _) => {
            for g in content.games() {
                f.write_game(g, name, out)?;
            }
        }
    }
    Ok(())
}

/// Progress of a batch: a bar on a terminal, one line per finished input otherwise.
struct BatchProgress {
    bar: Option<indicatif::ProgressBar>,
    files: AtomicUsize,
    done: AtomicUsize,
}

impl hamle::batch::Progress for BatchProgress {
    fn start(&self, files: usize) {
        self.files.store(files, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_message(format!("0/{files} files"));
        }
    }

    fn pages_found(&self, pages: usize) {
        if let Some(b) = &self.bar {
            b.inc_length(pages as u64);
        }
    }

    fn page_done(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    fn report(&self) {
        match &self.bar {
            Some(b) => b.set_message("writing report.html".to_string()),
            None => message("writing report.html"),
        }
    }

    fn file_done(&self, input: &hamle::batch::Input, outcome: &hamle::batch::FileOutcome) {
        use hamle::batch::FileOutcome;
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let files = self.files.load(Ordering::Relaxed);
        let line = match outcome {
            FileOutcome::Read(c) => format!(
                "[{done}/{files}] {}: {} page{}, {} game{}, {} position{}, {} flagged ({:.2} s)",
                input.display,
                c.pages,
                plural(c.pages),
                c.games,
                plural(c.games),
                c.positions,
                plural(c.positions),
                c.flagged,
                c.seconds
            ),
            FileOutcome::Resumed(_) => {
                if let Some(b) = &self.bar {
                    b.set_message(format!("{done}/{files} files"));
                }
                return;
            }
            FileOutcome::Failed(f) => format!(
                "[{done}/{files}] {}: failed ({}): {}",
                input.display, f.reason, f.error
            ),
        };
        match &self.bar {
            Some(b) => {
                b.set_message(format!("{done}/{files} files"));
                if matches!(outcome, FileOutcome::Failed(_)) {
                    b.println(format!("hamle: {line}"));
                }
            }
            None => message(&line),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn batch(args: &BatchArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let cfg = hamle::batch::BatchConfig {
        out_dir: args.out.clone(),
        jobs: args.jobs.map_or(0, |j| j as usize),
        resume: args.resume,
        read: read_config(args.lang, args.beam),
    };
    let (inputs, early) = hamle::batch::collect_inputs(&args.inputs, &args.out);
    for f in &early {
        message(&format!("{}: {}", f.file, f.error));
    }
    let bar = io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} pages · {msg} · {per_sec} · ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let progress = BatchProgress {
        bar,
        files: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
    };
    let summary = hamle::batch::run(&inputs, &early, &cfg, &progress)?;
    if let Some(b) = &progress.bar {
        b.finish_and_clear();
    }
    let s = &summary;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "files {} (read {}, finished earlier {}, failed {}) · pages {} (read now {}) · games {} · \
         positions {} · flagged {} · failures {} · {:.1} s · {:.2} pages/s · jobs {}",
        s.files,
        s.files_read,
        s.files_resumed,
        s.files_failed,
        s.pages,
        s.pages_read,
        s.games,
        s.positions,
        s.flagged,
        s.failures,
        s.seconds,
        s.pages_per_second,
        s.jobs
    )?;
    if s.failures > 0 {
        writeln!(
            out,
            "failures are listed in {}",
            args.out.join("errors.jsonl").display()
        )?;
    }
    finish(&mut out, s.failures > 0)
}

fn eval_boards(args: &BoardsEvalArgs) -> anyhow::Result<ExitCode> {
    let cfg = hamle::board::BoardConfig {
        kind: args.kind.kind(),
        coordinates: !args.no_coordinates,
        ..Default::default()
    };
    let report = hamle::eval::boards::run(&args.dir, &cfg)?;
    print_report(&report, args.json)
}

fn repair(cfg: &RepairConfig) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = false;
    for input in &cfg.inputs {
        let name = input.name();
        match repair_one(input, &name, cfg) {
            Ok(games) => {
                for game in &games {
                    cfg.format.write_game(game, &name, &mut out)?;
                }
            }
            Err(err) => {
                out.flush()?;
                message(&format!("{name}: {err:#}"));
                failed = true;
            }
        }
    }
    finish(&mut out, failed)
}

/// Reads one input and repairs every game in it.
fn repair_one(input: &Input, name: &str, cfg: &RepairConfig) -> anyhow::Result<Vec<Game>> {
    let text = match input {
        Input::Stdin => read_text(io::stdin().lock(), cfg.max_bytes)?,
        Input::Path(p) => read_text(File::open(p)?, cfg.max_bytes)?,
    };
    if text.encoding == Encoding::Windows1254 {
        message(&format!(
            "{name}: not UTF-8; read as {}",
            text.encoding.name()
        ));
    }
    if text.text.trim().is_empty() {
        bail!("empty input: no move text found");
    }
    let games = repair_text(&text.text, &cfg.decode)?;
    if games.is_empty() {
        bail!("no game found");
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("hamle").chain(args.iter().copied()))
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn repair_defaults() {
        let Command::Repair(args) = parse(&["repair"]).unwrap().command else {
            panic!("not repair");
        };
        let cfg = RepairConfig::new(args);
        assert_eq!(cfg.inputs, [Input::Stdin]);
        assert!(cfg.decode.lang.is_none());
        assert_eq!(cfg.decode.beam, DecodeConfig::default().beam);
        assert_eq!(cfg.format, Format::Pgn);
        assert_eq!(cfg.max_bytes, DEFAULT_MAX_BYTES);
    }

    #[test]
    fn repair_options() {
        let Command::Repair(args) = parse(&[
            "repair", "a.txt", "-", "--lang", "TR", "--format", "json", "--beam", "7",
        ])
        .unwrap()
        .command
        else {
            panic!("not repair");
        };
        let cfg = RepairConfig::new(args);
        assert_eq!(cfg.inputs, [Input::Path("a.txt".into()), Input::Stdin]);
        assert_eq!(cfg.decode.lang.map(|l| l.code), Some("tr"));
        assert_eq!(cfg.decode.beam, 7);
        assert_eq!(cfg.format, Format::Json);
        let Command::Repair(args) = parse(&["repair", "--format", "de"]).unwrap().command else {
            panic!("not repair");
        };
        assert!(matches!(args.format, Format::Text(Some(l)) if l.code == "de"));
    }

    #[test]
    fn eval_sheets_takes_decoder_costs() {
        let Command::Eval {
            command: EvalCommand::Sheets(args),
        } = parse(&["eval", "sheets", "d", "--costs", "refine_max=0,missing=9.5"])
            .unwrap()
            .command
        else {
            panic!("not eval sheets");
        };
        assert_eq!(
            args.costs,
            [
                ("refine_max".to_string(), 0.0),
                ("missing".to_string(), 9.5)
            ]
        );
        assert!(parse(&["eval", "sheets", "d", "--costs", "no_such_cost=1"]).is_err());
        assert!(parse(&["eval", "sheets", "d", "--costs", "missing"]).is_err());
    }

    #[test]
    fn usage_errors() {
        for bad in [
            &["repair", "--lang", "xx"][..],
            &["repair", "--format", "fen"],
            &["repair", "--beam", "0"],
            &["eval", "repair"],
            &["eval", "repair", "d", "--noise", "1.5"],
            &["frobnicate"],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn eval_repair_options() {
        let cli = parse(&["eval", "repair", "games/", "--noise", "0.01,0.2", "--json"]).unwrap();
        let Command::Eval {
            command: EvalCommand::Repair(a),
        } = cli.command
        else {
            panic!("not eval repair");
        };
        assert_eq!(a.paths, [PathBuf::from("games/")]);
        assert_eq!(a.noise, [0.01, 0.2]);
        assert_eq!(a.seed, 1);
        assert_eq!(a.games, None);
        assert!(a.json);
        let cli = parse(&["eval", "repair", "g.pgn"]).unwrap();
        let Command::Eval {
            command: EvalCommand::Repair(a),
        } = cli.command
        else {
            panic!("not eval repair");
        };
        assert_eq!(a.noise, [0.05, 0.10]);
        assert_eq!(a.drop, None);
        assert!(!a.auto_lang);
        let cli = parse(&[
            "eval",
            "repair",
            "a.pgn",
            "b/",
            "--noise",
            "0.1",
            "--noise",
            "0.3",
            "--drop",
            "0",
            "--games",
            "5",
            "--seed",
            "9",
            "--auto-lang",
        ])
        .unwrap();
        let Command::Eval {
            command: EvalCommand::Repair(a),
        } = cli.command
        else {
            panic!("not eval repair");
        };
        assert_eq!(a.paths.len(), 2);
        assert_eq!(a.noise, [0.1, 0.3]);
        assert_eq!(a.drop, Some(0.0));
        assert_eq!(a.games, Some(5));
        assert_eq!(a.seed, 9);
        assert!(a.auto_lang);
    }

    #[test]
    fn pending_commands_take_any_arguments() {
        assert!(parse(&["sheet", "a.png", "--format", "pgn", "--second", "b.png"]).is_ok());
        assert!(parse(&["eval", "boards", "dir"]).is_ok());
    }

    #[test]
    fn board_options() {
        let Command::Board(a) = parse(&["board", "a.png", "b.jpg"]).unwrap().command else {
            panic!("not board");
        };
        assert_eq!(a.format, BoardFormat::Fen);
        let cfg = a.config();
        assert_eq!((cfg.side, cfg.orientation), (None, None));
        let Command::Board(a) = parse(&[
            "board",
            "a.png",
            "--format",
            "JSON",
            "--side",
            "b",
            "--orientation",
            "black",
        ])
        .unwrap()
        .command
        else {
            panic!("not board");
        };
        assert_eq!(a.format, BoardFormat::Json);
        let cfg = a.config();
        assert_eq!(cfg.side, Some(shakmaty::Color::Black));
        assert_eq!(cfg.orientation, Some(hamle::board::Orientation::Black));
        for bad in [
            &["board"][..],
            &["board", "a.png", "--format", "pgn"],
            &["board", "a.png", "--side", "x"],
        ] {
            assert_eq!(parse(bad).unwrap_err().exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn broken_pipe_is_recognised() {
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&e));
        assert!(is_broken_pipe(&e.context("writing")));
        assert!(!is_broken_pipe(&anyhow::anyhow!("x")));
    }
}
