//! The user's agent as a child process: started in a process group of its
//! own with the gateway's address and token in its environment, its answer
//! read from its last line of stdout (or a file it writes), the tail of its
//! stderr kept for the workbench. Dropping a [`Running`] kills the group.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::tool::child::{self, Group};

/// How many lines of the agent's stderr are kept.
const STDERR_TAIL: usize = 20;
/// A kept line is cut at this many characters.
const LINE_CHARS: usize = 300;

/// Where a task's text goes in an agent's arguments.
pub const TASK_MARK: &str = "{task}";
/// Where the gateway's MCP URL and its client file go in an agent's
/// arguments, each the value of the environment variable beside it.
const ENV_MARKS: [(&str, &str); 2] = [("{mcp_url}", "SWITCHYARD_MCP_URL"), ("{mcp_config}", "SWITCHYARD_MCP_CONFIG")];

/// How to start the agent, and where its answer is.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentCommand {
    /// Program and arguments; `{task}` in an argument is the task's text
    /// (without one, the task is written to the agent's stdin), and
    /// `{mcp_url}` and `{mcp_config}` the gateway's MCP URL and client file.
    pub argv: Vec<String>,
    /// Set in the agent's environment (the gateway's URLs and token). Never
    /// recorded: the token is a secret.
    pub env: Vec<(String, String)>,
    /// A file the agent writes its answer to; else its last stdout line.
    pub answer_file: Option<PathBuf>,
}

impl AgentCommand {
    /// Whether the command takes the task in its arguments.
    pub fn takes_task(&self) -> bool {
        self.argv.iter().any(|a| a.contains(TASK_MARK))
    }

    /// The command line as the trace and the workbench show it, with the task in place.
    pub fn shown(&self, task: &str) -> String {
        self.args(task).iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    }

    fn args(&self, task: &str) -> Vec<String> {
        let env = |name: &str| self.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        self.argv
            .iter()
            .map(|a| {
                // The task last: its text may hold a mark of its own.
                let a = ENV_MARKS.iter().fold(a.clone(), |a, (mark, var)| match env(var) {
                    Some(v) if a.contains(mark) => a.replace(mark, v),
                    _ => a,
                });
                a.replace(TASK_MARK, task)
            })
            .collect()
    }
}

fn quote(a: &str) -> String {
    if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// An agent process that runs.
pub struct Running {
    child: Child,
    group: Option<Group>,
    pub pid: u32,
    stdout: JoinHandle<Option<String>>,
    stderr: JoinHandle<Vec<String>>,
    answer_file: Option<PathBuf>,
}

/// How the agent process ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// None: a signal ended it.
    pub code: Option<i32>,
    pub answer: Option<String>,
    pub stderr_tail: Vec<String>,
}

/// Starts the agent for `task`. The error says which program could not start.
pub fn start(cmd: &AgentCommand, task: &str) -> Result<Running, String> {
    let args = cmd.args(task);
    let Some((program, rest)) = args.split_first() else {
        return Err("the agent command is empty (give it after `--agent --`)".to_string());
    };
    let stdin = if cmd.takes_task() {
        Stdio::null()
    } else {
        let file = child::stdin_file(format!("{task}\n").as_bytes());
        Stdio::from(file.map_err(|e| format!("could not hand the task to `{program}`: {e}"))?)
    };
    let mut command = Command::new(program);
    command
        .args(rest)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, pgid) = child::spawn(command).map_err(|e| format!("could not start `{program}`: {e}"))?;
    let pid = child.id().unwrap_or(0);
    let stdout = child.stdout.take().map(BufReader::new);
    let stderr = child.stderr.take().map(BufReader::new);
    let stdout = tokio::spawn(async move {
        let mut last = None;
        if let Some(out) = stdout {
            let mut lines = out.lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if !line.trim().is_empty() {
                    last = Some(cut(&line));
                }
            }
        }
        last
    });
    let stderr = tokio::spawn(async move {
        let mut tail = VecDeque::new();
        if let Some(err) = stderr {
            let mut lines = err.lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tail.len() == STDERR_TAIL {
                    tail.pop_front();
                }
                tail.push_back(cut(&line));
            }
        }
        tail.into_iter().collect()
    });
    Ok(Running { child, group: Some(Group::new(pgid)), pid, stdout, stderr, answer_file: cmd.answer_file.clone() })
}

fn cut(line: &str) -> String {
    let line = crate::text::secret::redact(line).into_owned();
    match line.char_indices().nth(LINE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

impl Running {
    /// Not yet waited for to the end.
    pub fn alive(&self) -> bool {
        self.group.is_some()
    }

    /// Kills the agent and whatever it started (its process group).
    pub fn kill(&mut self) {
        if let Some(g) = self.group.as_ref() {
            g.kill();
        }
    }

    /// Waits for the process to end (cancel-safe: the wait can be
    /// abandoned and started again), then reads its answer and stderr.
    pub async fn wait(&mut self) -> Finished {
        let status = self.child.wait().await;
        // Whatever the agent left running in its group goes with it.
        drop(self.group.take());
        let code = status.ok().and_then(|s| s.code());
        let printed = (&mut self.stdout).await.ok().flatten();
        let stderr_tail = (&mut self.stderr).await.unwrap_or_default();
        let answer = match &self.answer_file {
            Some(path) => std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()),
            None => printed,
        };
        Finished { code, answer, stderr_tail }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_take_the_task_and_the_gateway_s_mcp_endpoint() {
        let argv = ["claude", "--mcp-config", "{mcp_config}", "-c", "url=\"{mcp_url}\"", "{task}", "{other}"];
        let cmd = AgentCommand {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env: vec![
                ("SWITCHYARD_MCP_URL".into(), "http://127.0.0.1:9/mcp".into()),
                ("SWITCHYARD_MCP_CONFIG".into(), "/tmp/x/mcp.json".into()),
            ],
            answer_file: None,
        };
        let args = cmd.args("say {mcp_url}");
        assert_eq!(args[2], "/tmp/x/mcp.json");
        assert_eq!(args[4], "url=\"http://127.0.0.1:9/mcp\"");
        assert_eq!(args[5], "say {mcp_url}", "a task's own text is left as it is");
        assert_eq!(args[6], "{other}");
    }
}
