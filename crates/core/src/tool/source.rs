//! Where a tool call's answer came from when the tool did not really run,
//! so a trace and the workbench never pass a stand-in off as the tool.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallSource {
    /// From a tool cassette: `--replay-tools` or a `recorded` executor.
    Recorded,
    /// Generated from the tool's response schema by a `synthesized` executor.
    Synthesized,
    /// Run by an outside agent's own code: Switchyard saw the call in a
    /// reply and its result in the agent's next request.
    Agent,
}

impl CallSource {
    pub fn label(self) -> &'static str {
        match self {
            CallSource::Recorded => "recorded",
            CallSource::Synthesized => "synthesized",
            CallSource::Agent => "agent's own",
        }
    }
}
