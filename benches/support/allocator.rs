//! The allocator the `switchyard` binary runs with (`src/main.rs`), so the
//! benches measure what ships.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
