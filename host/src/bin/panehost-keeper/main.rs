//! `panehost-keeper`: the keeper executable. Its contract is the
//! documentation of `panehost_host::keeper`.

fn main() {
    panehost_host::keeper::main()
}
