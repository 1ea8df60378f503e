//! The command line: clap definitions, the validated configuration built from them, and
//! the glue that runs each command over the library.
//!
//! Two levels, as ripgrep does it: the clap structs ([`Cli`] and the `*Args`) are raw
//! values checked without I/O; [`RepairConfig`] is built from them once parsing is done.
//! [`run`] does the I/O (files, stdin, stdout, stderr messages) and returns the exit code;
//! the pipeline itself lives in the library (`hamle::input`, `hamle::decode`,
//! `hamle::output`). `anyhow` is used here and nowhere in the library.
//!
//! Commands: `repair`, `sheet`, `board` and their `eval` reports work; `read` and `batch`
//! are defined (so the names of DESIGN.md's contract exist) and answer "not implemented yet"
//! with exit code 2.
//!
//! Exit codes: 0 every input read; 1 some input failed (each failure on stderr as
//! `hamle: NAME: message`, the other inputs still written); 2 usage error or a command
//! this version does not have. A closed stdout (broken pipe) counts as success.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use hamle::decode::{repair_text, DecodeConfig};
use hamle::eval::RepairEvalOptions;
use hamle::input::{read_text, Encoding, DEFAULT_MAX_BYTES};
use hamle::notation::{lang, Lang, LANGS};
use hamle::output::Format;
use hamle::record::Game;
use hamle::sheet::{SheetConfig, SheetReading};

/// Exit code: some input failed.
const EXIT_FAILED: u8 = 1;
/// Exit code: usage error, or a command this version does not have.
const EXIT_USAGE: u8 = 2;

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
    /// Auto-detect what each file holds (not implemented yet).
    Read(PendingArgs),
    /// Scoresheet images (photos or scans) → the games written on them.
    Sheet(SheetArgs),
    /// Board images (diagrams, screenshots, photos of screens and pages) → the position as FEN.
    Board(BoardArgs),
    /// Many files or PDFs, in parallel, resumable (not implemented yet).
    Batch(PendingArgs),
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
}

/// Whatever a command that does not exist yet was given.
#[derive(Debug, Args)]
pub struct PendingArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<OsString>,
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

    /// Also write every cell as the recognizer sees it, as `DIR/NAME-<move><w|b>.png`.
    #[arg(long, value_name = "DIR")]
    pub dump_cells: Option<PathBuf>,
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

    /// Which side is at the bottom of the image (default: decided from the pieces).
    #[arg(long, value_enum, ignore_case = true)]
    pub orientation: Option<OrientationArg>,
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
            }),
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

    /// Evaluate N games, evenly spaced over the corpus (default: all).
    #[arg(long, value_name = "N")]
    pub games: Option<usize>,

    /// Run language auto-detection on every game, not only on every tenth.
    #[arg(long)]
    pub auto_lang: bool,

    /// Decode with raw confidences and fit the per-status calibration on them (prints
    /// the pairs for `decode::Calibration`).
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
        Command::Read(_) => Ok(pending("read")),
        Command::Sheet(args) => sheet(&args),
        Command::Board(args) => board(&args),
        Command::Batch(_) => Ok(pending("batch")),
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

fn pending(command: &str) -> ExitCode {
    message(&format!(
        "`{command}` is not implemented yet in this version"
    ));
    ExitCode::from(EXIT_USAGE)
}

fn eval_repair(args: &RepairEvalArgs) -> anyhow::Result<ExitCode> {
    let mut opts = RepairEvalOptions {
        paths: args.paths.clone(),
        noise: args.noise.clone(),
        seed: args.seed,
        games: args.games,
        auto_lang: args.auto_lang,
        fit_calibration: args.fit_calibration,
        beam: args.beam.map(|b| b as usize),
        costs: args.costs.clone(),
        ..Default::default()
    };
    if let Some(drop) = args.drop {
        opts.drop = drop;
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
    let cfg = sheet_config(args.lang, args.beam);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = false;
    for path in &args.images {
        let name = path.display().to_string();
        if let Some(dir) = &args.dump_cells {
            if let Err(err) = dump_cells(path, dir) {
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
            Ok(r) => {
                if args.format == Format::Json {
                    let line = serde_json::to_string(&sheet_json(&r, &name)?)?;
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

fn dump_cells(path: &std::path::Path, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("sheet");
    for (b, img, _) in hamle::sheet::cell_images(path)? {
        let side = if b.side == hamle::sheet::Side::White {
            'w'
        } else {
            'b'
        };
        img.save(dir.join(format!("{stem}-{:03}{side}.png", b.number)))?;
    }
    Ok(())
}

/// The game's JSON object plus the sheet's: each move's cell `box`, every used cell
/// (`cells`), and what the layout found (`layout`).
fn sheet_json(r: &SheetReading, name: &str) -> anyhow::Result<serde_json::Value> {
    let mut v = hamle::output::json::to_value(&r.game, name)?;
    if let Some(moves) = v.get_mut("moves").and_then(|m| m.as_array_mut()) {
        for (m, c) in moves.iter_mut().zip(&r.cells) {
            if let Some(o) = m.as_object_mut() {
                o.insert("box".into(), serde_json::to_value(c.rect)?);
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.insert("cells".into(), serde_json::to_value(&r.cells)?);
        if !r.second_cells.is_empty() {
            o.insert(
                "second_cells".into(),
                serde_json::to_value(&r.second_cells)?,
            );
        }
        o.insert(
            "layout".into(),
            serde_json::json!({
                "blocks": r.blocks,
                "rows": r.rows,
                "skew_degrees": (r.skew * 100.0).round() / 100.0,
                "turned": r.turned,
            }),
        );
        o.insert(
            "seconds".into(),
            serde_json::json!((r.seconds * 1000.0).round() / 1000.0),
        );
    }
    Ok(v)
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
    let report = hamle::eval::sheets::run(&args.dir, &cfg, !args.no_second)?;
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
                BoardFormat::Fen => writeln!(out, "{}", r.fen)?,
                BoardFormat::Json => {
                    let mut v = serde_json::to_value(&r)?;
                    if let Some(o) = v.as_object_mut() {
                        o.insert("file".into(), serde_json::Value::String(name));
                        o.insert(
                            "seconds".into(),
                            serde_json::json!((r.seconds * 1000.0).round() / 1000.0),
                        );
                    }
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

fn eval_boards(args: &BoardsEvalArgs) -> anyhow::Result<ExitCode> {
    let report = hamle::eval::boards::run(&args.dir, &hamle::board::BoardConfig::default())?;
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
