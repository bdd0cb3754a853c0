//! The session's events as its viewers read them: the latest in memory,
//! the older ones in a file of the endpoint's own, so a session that runs
//! for days holds a window of events, not all of them. A viewer whose
//! cursor has fallen out of the window (it attached late, or stopped
//! reading) reads on from the file, then from memory, and gets every
//! event once, in order.
//!
//! The file is made in the sessions folder (0700), opened 0600 and
//! unlinked at once: it is gone when the process is, however it ends.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::protocol::{EventLine, line};
use crate::engine::Event;
use crate::engine::EventKind;
use crate::engine::fold::debug::DebugView;

/// Events kept in memory: a viewer that keeps up reads only these.
pub const WINDOW: usize = 4096;
/// Events moved to the file at once, when the window is this much over.
const EVICT: usize = 1024;
/// One event in this many has its offset in the file noted: reading from
/// any cursor skips at most this many lines.
const MARK: u64 = 64;
/// Bytes read from the file at once.
const CHUNK: usize = 64 * 1024;

struct Kept {
    event: Event,
    /// Its line, made the first time a viewer asks for it and shared by
    /// every viewer after.
    line: OnceLock<Arc<str>>,
}

impl Kept {
    fn line(&self) -> Arc<str> {
        self.line.get_or_init(|| line(&EventLine { event: &self.event }).into()).clone()
    }
}

/// Where the older events are.
struct Spill {
    file: Arc<File>,
    /// Bytes written.
    end: u64,
    /// The offset of every `MARK`-th event's line.
    marks: Vec<u64>,
}

/// Lines of the file to read, outside the log's lock.
pub struct FromFile {
    file: Arc<File>,
    offset: u64,
    /// Lines to pass over from `offset` to reach the cursor.
    skip: u64,
    /// Lines to hand back at most (the file's events from the cursor).
    count: usize,
    end: u64,
}

/// What a viewer reads next.
pub enum Batch {
    Lines(Vec<Arc<str>>),
    File(FromFile),
}

#[derive(Default)]
pub struct Log {
    window: VecDeque<Kept>,
    /// The number of the window's first event.
    base: u64,
    spill: Option<Spill>,
    /// Where the file is made; None keeps every event in memory.
    spill_dir: Option<std::path::PathBuf>,
    pub tasks: u32,
    pub done: u32,
    pub paused: bool,
    pub debug: DebugView,
    pub ended: bool,
}

impl Log {
    /// A log whose older events go to a file in `dir`.
    pub fn spilling_to(dir: &Path) -> Log {
        Log { spill_dir: Some(dir.to_path_buf()), ..Log::default() }
    }

    /// Events so far.
    pub fn len(&self) -> u64 {
        self.base + self.window.len() as u64
    }

    /// Events held in memory now.
    pub fn in_memory(&self) -> usize {
        self.window.len()
    }

    pub fn push(&mut self, e: Event) {
        match &e.kind {
            EventKind::SessionStarted { tasks, .. } => self.tasks = *tasks,
            EventKind::RunFinished { .. } => self.done += 1,
            EventKind::Paused => self.paused = true,
            EventKind::Resumed => self.paused = false,
            EventKind::SessionFinished { .. } => self.ended = true,
            _ => {}
        }
        self.debug.apply(&e.kind);
        self.window.push_back(Kept { event: e, line: OnceLock::new() });
        if self.window.len() >= WINDOW + EVICT {
            self.evict();
        }
    }

    /// The oldest `EVICT` events to the file. A file that cannot be made
    /// or written leaves them in memory: a viewer is never told a lie.
    fn evict(&mut self) {
        if self.spill.is_none() {
            let Some(dir) = &self.spill_dir else { return };
            match tempfile::tempfile_in(dir) {
                Ok(file) => self.spill = Some(Spill { file: Arc::new(file), end: 0, marks: Vec::new() }),
                Err(_) => {
                    self.spill_dir = None;
                    return;
                }
            }
        }
        let Some(spill) = self.spill.as_mut() else { return };
        let mut buf = String::new();
        let mut marks = Vec::new();
        for (n, kept) in self.window.iter().take(EVICT).enumerate() {
            if (self.base + n as u64) % MARK == 0 {
                marks.push(spill.end + buf.len() as u64);
            }
            buf.push_str(&kept.line());
        }
        if spill.file.write_all_at(buf.as_bytes(), spill.end).is_err() {
            self.spill_dir = None;
            return;
        }
        spill.end += buf.len() as u64;
        spill.marks.extend(marks);
        self.window.drain(..EVICT);
        self.base += EVICT as u64;
    }

    /// Up to `max` events from `from` on: from memory, or where to read
    /// them in the file.
    pub fn batch(&self, from: u64, max: usize) -> Batch {
        let from = from.min(self.len());
        match &self.spill {
            Some(spill) if from < self.base => {
                let mark = (from / MARK) as usize;
                Batch::File(FromFile {
                    file: spill.file.clone(),
                    offset: spill.marks[mark],
                    skip: from - mark as u64 * MARK,
                    count: max.min((self.base - from) as usize),
                    end: spill.end,
                })
            }
            _ => {
                let at = (from - self.base) as usize;
                Batch::Lines(self.window.iter().skip(at).take(max).map(Kept::line).collect())
            }
        }
    }
}

impl FromFile {
    /// The lines, read (blocking: a file of this machine's, in chunks).
    pub fn read(self) -> std::io::Result<Vec<Arc<str>>> {
        let mut out = Vec::with_capacity(self.count);
        let (mut offset, mut skip) = (self.offset, self.skip);
        let mut partial: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; CHUNK];
        while out.len() < self.count && offset < self.end {
            let want = CHUNK.min((self.end - offset) as usize);
            let got = self.file.read_at(&mut chunk[..want], offset)?;
            if got == 0 {
                break;
            }
            offset += got as u64;
            let mut rest = &chunk[..got];
            while let Some(nl) = rest.iter().position(|b| *b == b'\n') {
                partial.extend_from_slice(&rest[..=nl]);
                rest = &rest[nl + 1..];
                if skip > 0 {
                    skip -= 1;
                } else {
                    let text = String::from_utf8(std::mem::take(&mut partial))
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
                    out.push(text.into());
                    if out.len() == self.count {
                        return Ok(out);
                    }
                }
                partial.clear();
            }
            partial.extend_from_slice(rest);
        }
        Ok(out)
    }
}
