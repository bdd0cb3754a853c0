//! What the strategy knows of each tool's protocol: the library's
//! documentation, probes saved in the data directory, and probes made in
//! this session (kept for later runs whether or not a store keeps them).

use std::collections::BTreeMap;

use crate::engine::Host;
use crate::program::protocol::{Probed, Protocol};
use crate::program::sandbox::bindings;

#[derive(Clone, Debug, Default)]
pub struct Known {
    probed: BTreeMap<String, Probed>,
}

impl Known {
    /// The protocol of a library tool, with what probing learnt of it.
    pub fn protocol(&self, host: &dyn Host, tool: &str) -> Option<Protocol> {
        let spec = host.library().get(tool)?;
        let function = bindings([tool]).remove(0).function;
        let stored = match self.probed.get(tool) {
            Some(p) => Some(p.clone()),
            // A damaged store file was reported when the session opened it;
            // here it only means the tool is undocumented.
            None => host.protocol_store().and_then(|s| s.load(spec).ok().flatten()),
        };
        Some(Protocol::of(spec, &function, stored.as_ref()))
    }

    /// The protocols of `tools`, each under the function name it is bound to.
    pub fn protocols(&self, host: &dyn Host, tools: &[String]) -> Vec<Protocol> {
        let b = bindings(tools.iter().map(String::as_str));
        b.iter()
            .filter_map(|b| {
                let mut p = self.protocol(host, &b.tool)?;
                p.function = b.function.clone();
                Some(p)
            })
            .collect()
    }

    /// A probe made in this session.
    pub fn insert(&mut self, probed: Probed) {
        self.probed.insert(probed.tool.clone(), probed);
    }
}
