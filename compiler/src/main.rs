fn main() -> std::process::ExitCode {
    irisc::driver::main()
}
