//! `hamle batch`: many files (scans, photos, PDFs, move text; folders of them) → per input one
//! PGN file and one JSON Lines file, read in parallel, resumable, never losing finished work.
//!
//! Input: paths ([`collect_inputs`] walks folders) and a [`BatchConfig`]. Output: files under
//! the output folder, and a [`Summary`] (the exit code is the caller's: 1 when
//! [`Summary::failures`] is not 0). Progress goes to a [`Progress`] the caller supplies; this
//! module writes nothing to the terminal.
//!
//! The output folder:
//!
//! | path | what |
//! |---|---|
//! | `NAME.pgn` | every game of the input, and every position as a PGN game with `SetUp`/`FEN` |
//! | `NAME.json` | one JSON object per record, as `hamle read --format json` prints them (`kind` `sheet`, `board`, `text`, or `none` for a page of a document that held no chess; a board's reader as `board_kind`, `diagram` or `physical`) |
//! | `errors.jsonl` | one object per failure: `file`, `page` (1-based or `null`), `reason` (`unreadable`, `not_chess`, `blank`, `no_game`, `model`, `output`), `error` |
//! | `summary.json` | the [`Summary`] |
//! | `report.html` | the review report ([`crate::report`]): every input's records, flagged first, with crops |
//! | `.hamle/done/NAME.json` | the record that `NAME` is finished (size and time of the input it was read from, its counts and failures) |
//! | `.hamle/pages/NAME/PAGE.json` | a finished page of a document still being read |
//!
//! `NAME` is the input's path below the folder it was found in (or its file name), without
//! its extension; when two inputs would share a name, the extension is kept, then `-2`, `-3`…
//! are added.
//!
//! Finished means on disk: each output file is written to a temporary file and renamed, the
//! `done` record last. A run that is killed loses at most the pages being read at that moment;
//! `--resume` ([`BatchConfig::resume`]) skips every input whose `done` record matches the
//! input's size and modification time, and every finished page of a document. One bad file
//! (unreadable, no chess in it) is a failure in `errors.jsonl`, never the end of the run.
//!
//! A book ([`crate::book::is_book`]: move text in a PDF's text layer, or printed moves on
//! its first scanned pages) is read whole (its games run across pages) and redone whole on
//! resume. Pages of other documents are read in
//! parallel like files; a page is decoded or drawn only
//! when a worker takes it, so memory grows with the number of workers, not of pages.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, UNIX_EPOCH};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::pages::{self, Document};
use crate::read::{Content, ReadConfig, ReadError};

/// Folder of hamle's own bookkeeping inside the output folder.
pub const STATE_DIR: &str = ".hamle";

/// How to run a batch.
#[derive(Debug, Clone)]
pub struct BatchConfig {
    /// Where the outputs go (created when missing).
    pub out_dir: PathBuf,
    /// Worker threads; 0 = one per core.
    pub jobs: usize,
    /// Skip the inputs (and pages) a previous run finished.
    pub resume: bool,
    pub read: ReadConfig,
}

/// One input file and the name its outputs get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    /// The input as shown in messages and written in the records' `file` field.
    pub display: String,
    /// Output name (see the module docs), `/`-separated, no extension.
    pub name: String,
}

/// One failure, as a line of `errors.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub file: String,
    /// 1-based page, `None` for the file as a whole.
    pub page: Option<usize>,
    pub reason: String,
    pub error: String,
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Inputs found.
    pub files: usize,
    /// Inputs read in this run.
    pub files_read: usize,
    /// Inputs skipped as finished by an earlier run (`--resume`).
    pub files_resumed: usize,
    /// Inputs that gave nothing (listed in `errors.jsonl`).
    pub files_failed: usize,
    /// Pages of the inputs read or resumed.
    pub pages: usize,
    /// Pages read in this run.
    pub pages_read: usize,
    pub games: usize,
    pub positions: usize,
    /// Flagged plies and unsure `ok` ones, plus boards with rule flags or unsure squares.
    pub flagged: usize,
    /// Lines of `errors.jsonl`.
    pub failures: usize,
    pub seconds: f64,
    /// Pages read in this run per second of wall time.
    pub pages_per_second: f64,
    pub jobs: usize,
}

/// How one input ended.
#[derive(Debug, Clone)]
pub enum FileOutcome {
    /// Read now: its counts.
    Read(Counts),
    /// Finished by an earlier run.
    Resumed(Counts),
    /// Nothing came of it.
    Failed(Failure),
}

/// Counts of one input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub pages: usize,
    /// Pages read in this run (0 for a resumed input).
    pub pages_read: usize,
    pub games: usize,
    pub positions: usize,
    pub flagged: usize,
    /// Pages that failed (a failed whole input is not counted here).
    pub failed_pages: usize,
    /// Wall time spent on it in this run.
    pub seconds: f64,
}

/// Where a batch reports progress; every method may be called from any worker thread.
pub trait Progress: Sync {
    /// The run starts with `files` inputs.
    fn start(&self, _files: usize) {}
    /// A document with `pages` pages was opened.
    fn pages_found(&self, _pages: usize) {}
    /// A page was read (or found finished).
    fn page_done(&self) {}
    /// An input is finished.
    fn file_done(&self, _input: &Input, _outcome: &FileOutcome) {}
    /// Every input is finished; the review report is being written.
    fn report(&self) {}
}

/// A [`Progress`] that reports nothing.
pub struct Quiet;

impl Progress for Quiet {}

/// Why a batch could not run at all (a failing input never is one).
#[derive(Debug)]
#[non_exhaustive]
pub enum BatchError {
    /// The output folder cannot be made or written.
    OutDir(PathBuf, io::Error),
    /// The worker threads could not be started.
    Threads(String),
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::OutDir(p, e) => write!(f, "output folder {}: {e}", p.display()),
            BatchError::Threads(e) => write!(f, "cannot start the worker threads: {e}"),
        }
    }
}

impl std::error::Error for BatchError {}

/// The inputs named by `paths`: files as given, folders walked (sorted, hidden entries and
/// `out_dir` left out). A path that does not exist is a failure.
pub fn collect_inputs(paths: &[PathBuf], out_dir: &Path) -> (Vec<Input>, Vec<Failure>) {
    let out_canon = fs::canonicalize(out_dir).ok();
    let mut found: Vec<(PathBuf, String, String)> = Vec::new();
    let mut failures = Vec::new();
    let mut seen = HashSet::new();
    for p in paths {
        let display = p.display().to_string();
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut w = Walk {
                    root: p,
                    skip: out_canon.as_deref(),
                    walked: HashSet::new(),
                    files: Vec::new(),
                    failures: &mut failures,
                };
                w.dir(p);
                for (path, rel) in w.files {
                    if seen.insert(fs::canonicalize(&path).unwrap_or_else(|_| path.clone())) {
                        let display = path.display().to_string();
                        found.push((path, display, rel));
                    }
                }
            }
            Ok(_) => {
                if seen.insert(fs::canonicalize(p).unwrap_or_else(|_| p.clone())) {
                    let rel = p
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_else(|| display.clone());
                    found.push((p.clone(), display, rel));
                }
            }
            Err(e) => failures.push(Failure::unreadable(p, format!("cannot read: {e}"))),
        }
    }
    (name_inputs(found), failures)
}

impl Failure {
    /// An input (a file or folder, not a page) that cannot be read.
    fn unreadable(file: &Path, error: String) -> Failure {
        Failure {
            file: file.display().to_string(),
            page: None,
            reason: "unreadable".into(),
            error,
        }
    }
}

/// A folder walk: files under `root`, `skip` (the output folder) left out.
struct Walk<'a> {
    root: &'a Path,
    skip: Option<&'a Path>,
    /// The folders walked so far, canonical.
    walked: HashSet<PathBuf>,
    /// The files found, with their paths relative to `root` (`/`-separated).
    files: Vec<(PathBuf, String)>,
    failures: &'a mut Vec<Failure>,
}

impl Walk<'_> {
    /// Adds the regular files under `dir` to `files`, sorted. A folder already walked
    /// (through a link back up the tree) is not walked again; an entry that cannot be read
    /// (a dangling link) is a failure.
    fn dir(&mut self, dir: &Path) {
        if !self
            .walked
            .insert(fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
        {
            return;
        }
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.failures.push(Failure::unreadable(
                    dir,
                    format!("cannot list the folder: {e}"),
                ));
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if hidden {
                continue;
            }
            if self
                .skip
                .is_some_and(|s| fs::canonicalize(&path).ok().as_deref() == Some(s))
            {
                continue;
            }
            match fs::metadata(&path) {
                Ok(m) if m.is_dir() => self.dir(&path),
                Ok(m) if m.is_file() => {
                    let rel = path
                        .strip_prefix(self.root)
                        .unwrap_or(&path)
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/");
                    self.files.push((path, rel));
                }
                // sockets, pipes, devices: not documents
                Ok(_) => {}
                Err(e) => self
                    .failures
                    .push(Failure::unreadable(&path, format!("cannot read: {e}"))),
            }
        }
    }
}

/// Output names: the relative path without extension; on a clash the extension is kept,
/// then `-2`, `-3`, … added. Compared without case (outputs may land on a case-blind disk).
fn name_inputs(found: Vec<(PathBuf, String, String)>) -> Vec<Input> {
    let stem_of = |rel: &str| -> String {
        let (dir, file) = rel.rsplit_once('/').map_or(("", rel), |(d, f)| (d, f));
        let stem = match file.rsplit_once('.') {
            Some((s, _)) if !s.is_empty() => s,
            _ => file,
        };
        if dir.is_empty() {
            stem.to_string()
        } else {
            format!("{dir}/{stem}")
        }
    };
    let mut count = std::collections::HashMap::new();
    for (_, _, rel) in &found {
        *count.entry(stem_of(rel).to_lowercase()).or_insert(0usize) += 1;
    }
    let mut taken = HashSet::new();
    let mut inputs = Vec::with_capacity(found.len());
    for (path, display, rel) in found {
        let stem = stem_of(&rel);
        let first = if count.get(&stem.to_lowercase()).copied().unwrap_or(0) > 1 {
            rel.clone()
        } else {
            stem
        };
        let mut name = first.clone();
        let mut k = 2;
        while !taken.insert(name.to_lowercase()) {
            name = format!("{first}-{k}");
            k += 1;
        }
        inputs.push(Input {
            path,
            display,
            name,
        });
    }
    inputs
}

/// The `done` record of a finished input.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Done {
    size: u64,
    modified_ns: u128,
    counts: Counts,
    failures: Vec<Failure>,
}

/// A finished page of a document, kept until the document is finished.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PagePart {
    values: Vec<Value>,
    pgn: String,
    games: usize,
    positions: usize,
    flagged: usize,
    failure: Option<Failure>,
}

/// Runs a batch over `inputs` (from [`collect_inputs`]); `early` are failures found while
/// collecting them, written to `errors.jsonl` first.
///
/// # Errors
///
/// Only when the output folder cannot be used or the threads cannot start; every input's
/// failure is in the summary and `errors.jsonl`.
pub fn run(
    inputs: &[Input],
    early: &[Failure],
    cfg: &BatchConfig,
    progress: &dyn Progress,
) -> Result<Summary, BatchError> {
    let t0 = Instant::now();
    let out_err = |e: io::Error| BatchError::OutDir(cfg.out_dir.clone(), e);
    fs::create_dir_all(cfg.out_dir.join(STATE_DIR).join("done")).map_err(out_err)?;
    let errors = File::create(cfg.out_dir.join("errors.jsonl")).map_err(out_err)?;
    let log = ErrorLog {
        file: Mutex::new(BufWriter::new(errors)),
        count: AtomicUsize::new(0),
    };
    for f in early {
        log.push(f);
    }
    let jobs = if cfg.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cfg.jobs
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| BatchError::Threads(e.to_string()))?;
    progress.start(inputs.len());
    let outcomes: Vec<FileOutcome> = pool.install(|| {
        inputs
            .par_iter()
            .map(|input| {
                let outcome = run_one(input, cfg, &log, progress);
                progress.file_done(input, &outcome);
                outcome
            })
            .collect()
    });
    let mut s = Summary {
        files: inputs.len() + early.iter().filter(|f| f.page.is_none()).count(),
        jobs,
        ..Summary::default()
    };
    s.files_failed = early.iter().filter(|f| f.page.is_none()).count();
    for o in &outcomes {
        let c = match o {
            FileOutcome::Read(c) => {
                s.files_read += 1;
                c
            }
            FileOutcome::Resumed(c) => {
                s.files_resumed += 1;
                c
            }
            FileOutcome::Failed(_) => {
                s.files_failed += 1;
                continue;
            }
        };
        s.pages += c.pages;
        s.pages_read += c.pages_read;
        s.games += c.games;
        s.positions += c.positions;
        s.flagged += c.flagged;
    }
    log.flush();
    s.failures = log.count.load(Ordering::Relaxed);
    progress.report();
    let report = pool.install(|| write_report(inputs, &outcomes, cfg));
    if let Err(e) = report {
        return Err(BatchError::OutDir(cfg.out_dir.join("report.html"), e));
    }
    s.seconds = round3(t0.elapsed().as_secs_f64());
    s.pages_per_second = if s.seconds > 0.0 {
        round3(s.pages_read as f64 / s.seconds)
    } else {
        0.0
    };
    let json = serde_json::to_vec_pretty(&s).unwrap_or_default();
    write_atomic(&cfg.out_dir.join("summary.json"), &json).map_err(out_err)?;
    Ok(s)
}

/// Writes `report.html` from the records on disk of every input read now or before.
fn write_report(inputs: &[Input], outcomes: &[FileOutcome], cfg: &BatchConfig) -> io::Result<()> {
    let sections: Vec<crate::report::Section> = inputs
        .par_iter()
        .zip(outcomes)
        .filter(|(_, o)| !matches!(o, FileOutcome::Failed(_)))
        .filter_map(|(input, _)| {
            let text = fs::read_to_string(out_path(cfg, &input.name, "json")).ok()?;
            let records: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            Some(crate::report::section(
                &input.display,
                &input.name,
                &input.path,
                &records,
            ))
        })
        .collect();
    let failures: Vec<Value> = fs::read_to_string(cfg.out_dir.join("errors.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut html = Vec::new();
    crate::report::write("hamle review", &sections, &failures, &mut html)?;
    write_atomic(&cfg.out_dir.join("report.html"), &html)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

struct ErrorLog {
    file: Mutex<BufWriter<File>>,
    count: AtomicUsize,
}

impl ErrorLog {
    /// Appends one failure and flushes it, so a killed run keeps what it had found.
    fn push(&self, f: &Failure) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if let Ok(line) = serde_json::to_string(f) {
            // A poisoned lock means another worker panicked while writing a line; the
            // file is still usable.
            let mut w = self.file.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    }

    fn flush(&self) {
        let mut w = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = w.flush();
    }
}

/// The size and modification time (ns since 1970) of a file.
fn stamp(path: &Path) -> Option<(u64, u128)> {
    let m = fs::metadata(path).ok()?;
    let t = m
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((m.len(), t))
}

fn out_path(cfg: &BatchConfig, name: &str, ext: &str) -> PathBuf {
    cfg.out_dir.join(format!("{name}.{ext}"))
}

fn done_path(cfg: &BatchConfig, name: &str) -> PathBuf {
    cfg.out_dir
        .join(STATE_DIR)
        .join("done")
        .join(format!("{name}.json"))
}

fn parts_dir(cfg: &BatchConfig, name: &str) -> PathBuf {
    cfg.out_dir.join(STATE_DIR).join("pages").join(name)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// A finished earlier run's record of `input`, when it still matches the input.
fn finished(input: &Input, cfg: &BatchConfig) -> Option<Done> {
    let bytes = fs::read(done_path(cfg, &input.name)).ok()?;
    let done: Done = serde_json::from_slice(&bytes).ok()?;
    let (size, t) = stamp(&input.path)?;
    let outputs =
        out_path(cfg, &input.name, "pgn").is_file() && out_path(cfg, &input.name, "json").is_file();
    (done.size == size && done.modified_ns == t && outputs).then_some(done)
}

fn run_one(
    input: &Input,
    cfg: &BatchConfig,
    log: &ErrorLog,
    progress: &dyn Progress,
) -> FileOutcome {
    if cfg.resume {
        if let Some(done) = finished(input, cfg) {
            for f in &done.failures {
                log.push(f);
            }
            for _ in 0..done.counts.pages {
                progress.page_done();
            }
            progress.pages_found(done.counts.pages);
            let mut c = done.counts;
            c.pages_read = 0;
            c.seconds = 0.0;
            return FileOutcome::Resumed(c);
        }
    }
    let t0 = Instant::now();
    let fail = |reason: &str, error: String| {
        let f = Failure {
            file: input.display.clone(),
            page: None,
            reason: reason.into(),
            error,
        };
        log.push(&f);
        FileOutcome::Failed(f)
    };
    let stamp_before = stamp(&input.path);
    let doc = match pages::open(&input.path) {
        Ok(d) => d,
        Err(e) => return fail("unreadable", e.to_string()),
    };
    progress.pages_found(doc.pages());
    let book = crate::book::is_book(&doc);
    let multi = doc.pages() > 1 && !book;
    let parts: Vec<PagePart> = if book {
        // A book is read whole: its games run across pages.
        let part = make_part(
            crate::read::read_book(&doc, &cfg.read),
            &input.display,
            None,
        );
        for _ in 0..doc.pages() {
            progress.page_done();
        }
        vec![part]
    } else {
        (0..doc.pages())
            .into_par_iter()
            .map(|i| {
                let part = page_part(&doc, i, multi, input, cfg);
                progress.page_done();
                part
            })
            .collect()
    };
    let mut counts = Counts {
        pages: doc.pages(),
        pages_read: doc.pages(),
        ..Counts::default()
    };
    let mut json = Vec::new();
    let mut pgn = String::new();
    let mut failures = Vec::new();
    let mut records = 0;
    for p in &parts {
        counts.games += p.games;
        counts.positions += p.positions;
        counts.flagged += p.flagged;
        records += p.games + p.positions;
        for v in &p.values {
            if let Ok(line) = serde_json::to_string(v) {
                json.extend_from_slice(line.as_bytes());
                json.push(b'\n');
            }
        }
        pgn.push_str(&p.pgn);
        if let Some(f) = &p.failure {
            failures.push(f.clone());
        }
    }
    if records == 0 {
        // Nothing chess in it: one failure for the input, with the first page's reason.
        let (reason, error) = match parts.iter().find_map(|p| p.failure.as_ref()) {
            Some(f) if !multi => (f.reason.clone(), f.error.clone()),
            Some(f) => (
                f.reason.clone(),
                format!(
                    "no page holds a game or a board (page {}: {})",
                    f.page.unwrap_or(1),
                    f.error
                ),
            ),
            None => ("not_chess".into(), "no game or board found".into()),
        };
        let _ = fs::remove_dir_all(parts_dir(cfg, &input.name));
        return fail(&reason, error);
    }
    // Failures that are the page's own (undecodable, a model error) count; pages that merely
    // hold no chess in a document with chess elsewhere are `none` records, not failures.
    failures.retain(|f| f.reason != "not_chess" && f.reason != "blank");
    counts.failed_pages = failures.len();
    for f in &failures {
        log.push(f);
    }
    counts.seconds = round3(t0.elapsed().as_secs_f64());
    let written = write_atomic(&out_path(cfg, &input.name, "pgn"), pgn.as_bytes())
        .and_then(|_| write_atomic(&out_path(cfg, &input.name, "json"), &json));
    if let Err(e) = written {
        return fail("output", format!("cannot write the outputs: {e}"));
    }
    // The input's stamp from before reading: a file changed meanwhile is read again next time.
    if let Some((size, modified_ns)) = stamp_before {
        let done = Done {
            size,
            modified_ns,
            counts: counts.clone(),
            failures,
        };
        let bytes = serde_json::to_vec(&done).unwrap_or_default();
        if let Err(e) = write_atomic(&done_path(cfg, &input.name), &bytes) {
            return fail("output", format!("cannot record it as finished: {e}"));
        }
    }
    if multi {
        let _ = fs::remove_dir_all(parts_dir(cfg, &input.name));
    }
    FileOutcome::Read(counts)
}

/// Reads page `i` of `doc`, or takes it from a finished part on disk (documents of more than
/// one page keep each finished page until the whole document is done).
fn page_part(doc: &Document, i: usize, multi: bool, input: &Input, cfg: &BatchConfig) -> PagePart {
    let part_path = parts_dir(cfg, &input.name).join(format!("{:05}.json", i + 1));
    if multi && cfg.resume {
        if let Some(p) = fs::read(&part_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<PagePart>(&b).ok())
        {
            return p;
        }
    }
    let page_no = multi.then_some(i);
    let content = crate::read::read_document_page(doc, i, &cfg.read);
    let part = make_part(content, &input.display, page_no);
    if multi {
        if let Ok(bytes) = serde_json::to_vec(&part) {
            // A page that cannot be kept is read again on resume; nothing else is lost.
            let _ = write_atomic(&part_path, &bytes);
        }
    }
    part
}

fn make_part(content: Result<Content, ReadError>, file: &str, page: Option<usize>) -> PagePart {
    match content {
        Ok(c) => match c.values(file, page) {
            Ok(values) => PagePart {
                values,
                pgn: c.pgn(file, page),
                games: c.games().len(),
                positions: c.positions(),
                flagged: c.flagged(),
                failure: None,
            },
            Err(e) => failed_part(file, page, "output", e.to_string()),
        },
        Err(e) => failed_part(file, page, e.reason(), e.to_string()),
    }
}

fn failed_part(file: &str, page: Option<usize>, reason: &str, error: String) -> PagePart {
    let record = serde_json::json!({
        "file": file,
        "page": page.map(|p| p + 1),
        "kind": "none",
        "reason": reason,
        "error": error,
    });
    PagePart {
        values: if page.is_some() {
            vec![record]
        } else {
            Vec::new()
        },
        pgn: String::new(),
        games: 0,
        positions: 0,
        flagged: 0,
        failure: Some(Failure {
            file: file.into(),
            page: page.map(|p| p + 1),
            reason: reason.into(),
            error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(rels: &[&str]) -> Vec<String> {
        name_inputs(
            rels.iter()
                .map(|r| (PathBuf::from(r), r.to_string(), r.to_string()))
                .collect(),
        )
        .into_iter()
        .map(|i| i.name)
        .collect()
    }

    #[test]
    fn output_names() {
        assert_eq!(
            names(&["a.png", "b.jpg", "sub/a.png", "c"]),
            ["a", "b", "sub/a", "c"]
        );
        assert_eq!(names(&["g.png", "g.PDF"]), ["g.png", "g.PDF"]);
        assert_eq!(names(&["x/g.png", "x/g.png"]), ["x/g.png", "x/g.png-2"]);
        assert_eq!(names(&[".hidden"]), [".hidden"]);
    }

    /// A dangling link in a folder is a failure, not skipped in silence; a link back up
    /// the tree is not walked round and round.
    #[cfg(unix)]
    #[test]
    fn dangling_and_looping_links() {
        let dir = std::env::temp_dir().join(format!("hamle-batch-links-{}", std::process::id()));
        let src = dir.join("in");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("sub/g.txt"), "1. e4 e5").unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere.png"), src.join("gone.png")).unwrap();
        std::os::unix::fs::symlink(&src, src.join("sub/up")).unwrap();
        let (inputs, early) = collect_inputs(std::slice::from_ref(&src), &dir.join("out"));
        assert_eq!(
            inputs.len(),
            1,
            "{:?}",
            inputs.iter().map(|i| &i.name).collect::<Vec<_>>()
        );
        assert_eq!(early.len(), 1);
        assert!(early[0].file.ends_with("gone.png"), "{}", early[0].file);
        assert_eq!(early[0].reason, "unreadable");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn atomic_write_replaces() {
        let dir = std::env::temp_dir().join(format!("hamle-batch-{}", std::process::id()));
        let p = dir.join("sub/out.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let left: Vec<_> = fs::read_dir(dir.join("sub")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn text_inputs_and_bad_files() {
        let dir = std::env::temp_dir().join(format!("hamle-batch-run-{}", std::process::id()));
        let src = dir.join("in");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("g1.txt"), "1. e4 e5 2. Af3 Ac6 3. Fb5 a6 1-0").unwrap();
        fs::write(src.join("sub/g2.pgn"), "1. d4 d5 2. c4 e6").unwrap();
        fs::write(src.join("broken.png"), b"\x89PNG\r\n\x1a\nnot really").unwrap();
        fs::write(src.join("notes.txt"), "call the arbiter at noon").unwrap();
        fs::write(src.join(".hidden.txt"), "1. e4").unwrap();
        let out = dir.join("out");
        let cfg = BatchConfig {
            out_dir: out.clone(),
            jobs: 2,
            resume: false,
            read: ReadConfig::default(),
        };
        let (inputs, early) = collect_inputs(&[src.clone(), dir.join("missing.png")], &out);
        assert_eq!(inputs.len(), 4);
        assert_eq!(early.len(), 1);
        let s = run(&inputs, &early, &cfg, &Quiet).unwrap();
        assert_eq!((s.files, s.files_read, s.files_failed), (5, 2, 3));
        assert_eq!((s.games, s.failures), (2, 3));
        let pgn = fs::read_to_string(out.join("sub/g2.pgn")).unwrap();
        assert!(pgn.contains("1. d4 d5 2. c4 e6"), "{pgn}");
        let errors = fs::read_to_string(out.join("errors.jsonl")).unwrap();
        let reasons: Vec<String> = errors
            .lines()
            .map(|l| serde_json::from_str::<Failure>(l).unwrap().reason)
            .collect();
        assert_eq!(reasons.len(), 3);
        assert!(reasons.contains(&"no_game".to_string()), "{errors}");
        assert!(reasons.contains(&"unreadable".to_string()), "{errors}");

        // Resume: finished inputs are skipped, failed ones tried again.
        let cfg = BatchConfig {
            resume: true,
            ..cfg
        };
        let s2 = run(&inputs, &early, &cfg, &Quiet).unwrap();
        assert_eq!(
            (s2.files_resumed, s2.files_read, s2.files_failed),
            (2, 0, 3)
        );
        assert_eq!((s2.games, s2.failures), (2, 3));
        // A changed input is read again.
        fs::write(src.join("g1.txt"), "1. e4 c5 2. Af3 d6").unwrap();
        let s3 = run(&inputs, &early, &cfg, &Quiet).unwrap();
        assert_eq!((s3.files_resumed, s3.files_read), (1, 1));
        let pgn = fs::read_to_string(out.join("g1.pgn")).unwrap();
        assert!(pgn.contains("1. e4 c5"), "{pgn}");
        let _ = fs::remove_dir_all(dir);
    }
}
