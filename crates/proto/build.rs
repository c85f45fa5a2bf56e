//! Compiles `proto/` with protox (pure Rust), so building needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto");
    let fds = protox::compile(["matchmaker/v1/server_manager.proto"], ["../../proto"])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
