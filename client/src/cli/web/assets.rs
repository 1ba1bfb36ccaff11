//! The page's files: its own, built into the executable, and the xterm.js
//! packages, installed once next to the user's data.
//!
//! The page's own files (index.html, its modules and styles, all in the
//! repository's `client/web`) are compiled into `panehost`, so an installed
//! binary serves its page wherever it runs. The xterm.js packages it loads
//! (`/vendor/...`) come from npm and are not built in: `panehost web
//! --install-assets` installs the versions the page was written against
//! (those of `client/web/package-lock.json`, built in too) into
//! `$XDG_DATA_HOME/panehost/web` (else `~/.local/share/panehost/web`) with
//! npm, once. The packages are looked for, in order, in:
//!
//! - `--assets DIR` (which then also provides the page's own files, read
//!   from disk on every request: for working on the page);
//! - the data directory above;
//! - `web/` beside the executable, and `../share/panehost/web` from it (an
//!   installed layout);
//! - `../../client/web` from it, and the crate's own `web/` as it was when
//!   this was built (a cargo build, after `npm ci` in `client/web`).
//!
//! When the packages are missing, the page answers a 500 that says how to
//! install them.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use std::path::{Path, PathBuf};

/// The packages' files the page loads, as `/vendor/{name}`.
const VENDOR: &[(&str, &str)] = &[
    ("xterm.mjs", "node_modules/@xterm/xterm/lib/xterm.mjs"),
    ("xterm.css", "node_modules/@xterm/xterm/css/xterm.css"),
    ("addon-fit.mjs", "node_modules/@xterm/addon-fit/lib/addon-fit.mjs"),
    ("addon-serialize.mjs", "node_modules/@xterm/addon-serialize/lib/addon-serialize.mjs"),
];

/// The packages `--install-assets` installs.
const PACKAGES: &[&str] = &["@xterm/xterm", "@xterm/addon-fit", "@xterm/addon-serialize"];

/// The page's own files, built in.
const PAGE: &[(&str, &str)] = &[
    ("index.html", include_str!("../../../web/index.html")),
    ("access.js", include_str!("../../../web/access.js")),
    ("app.js", include_str!("../../../web/app.js")),
    ("bytes.js", include_str!("../../../web/bytes.js")),
    ("host-api.js", include_str!("../../../web/host-api.js")),
    ("pane-grid.js", include_str!("../../../web/pane-grid.js")),
    ("pane-list.js", include_str!("../../../web/pane-list.js")),
    ("resume-store.js", include_str!("../../../web/resume-store.js")),
    ("sequence-tail.js", include_str!("../../../web/sequence-tail.js")),
    ("start-form.js", include_str!("../../../web/start-form.js")),
    ("style.css", include_str!("../../../web/style.css")),
    ("terminal-view.js", include_str!("../../../web/terminal-view.js")),
];

/// The lock file the page's packages were installed from, built in for the
/// versions `--install-assets` installs.
const PACKAGE_LOCK: &str = include_str!("../../../web/package-lock.json");

/// Where the page's files come from.
#[derive(Debug, Clone)]
pub(super) struct Assets {
    /// `--assets DIR`: the page's own files from disk too.
    page_dir: Option<PathBuf>,
    /// The directory whose `node_modules` holds the packages, if found.
    packages_dir: Option<PathBuf>,
    searched: Vec<PathBuf>,
}

impl Assets {
    /// `explicit`, or the built-in page and the first candidate directory
    /// that holds every package file.
    pub(super) fn locate(explicit: Option<&Path>) -> Assets {
        let candidates = match explicit {
            Some(dir) => vec![dir.to_path_buf()],
            None => default_candidates(),
        };
        let packages_dir =
            candidates.iter().find(|dir| VENDOR.iter().all(|(_, path)| dir.join(path).is_file())).cloned();
        Assets { page_dir: explicit.map(Path::to_path_buf), packages_dir, searched: candidates }
    }

    /// Where the packages are served from, when they were found.
    pub(super) fn packages_dir(&self) -> Option<&Path> {
        self.packages_dir.as_deref()
    }

    /// What is missing, in a sentence, or `None` when everything is there.
    pub(super) fn problem(&self) -> Option<String> {
        if let Some(dir) = &self.page_dir {
            if !dir.join("index.html").is_file() {
                return Some(format!("the web terminal's page was not found: no index.html in {}", dir.display()));
            }
        }
        if self.packages_dir.is_some() {
            return None;
        }
        let searched: Vec<String> = self.searched.iter().map(|dir| dir.display().to_string()).collect();
        Some(format!(
            "the web terminal's xterm.js packages are not installed (looked in: {}); run `panehost web \
             --install-assets` once (it needs npm)",
            searched.join(", ")
        ))
    }

    /// index.html, or the 500 page when anything the page needs is missing.
    pub(super) async fn index(&self) -> Response {
        if let Some(problem) = self.problem() {
            return missing_page(&problem);
        }
        self.page("index.html").await
    }

    /// One of the page's own `.js` or `.css` files (a plain name, no path).
    pub(super) async fn page_file(&self, name: &str) -> Response {
        if !is_page_file_name(name) {
            return not_found();
        }
        self.page(name).await
    }

    /// `/vendor/{name}`: a file of the npm packages.
    pub(super) async fn vendor_file(&self, name: &str) -> Response {
        let Some((_, path)) = VENDOR.iter().find(|(vendor, _)| *vendor == name) else {
            return not_found();
        };
        match &self.packages_dir {
            Some(dir) => serve_file(&dir.join(path), path).await,
            None => missing_page(&self.problem().unwrap_or_default()),
        }
    }

    /// A file of the page itself: from `--assets DIR`, else built in.
    async fn page(&self, name: &str) -> Response {
        match &self.page_dir {
            Some(dir) => serve_file(&dir.join(name), name).await,
            None => match PAGE.iter().find(|(page, _)| *page == name) {
                Some((_, contents)) => typed(Body::from(*contents), name),
                None => not_found(),
            },
        }
    }
}

/// The data directory the packages are installed into:
/// `$XDG_DATA_HOME/panehost/web`, else `~/.local/share/panehost/web`.
pub(super) fn data_dir() -> Option<PathBuf> {
    let data_home =
        std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|path| path.is_absolute()).or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        })?;
    Some(data_home.join("panehost").join("web"))
}

/// Installs the page's packages, at the versions of its lock file, into
/// [`data_dir`] with npm; returns the directory.
///
/// # Errors
/// Fails when there is no data directory, npm cannot be run, or it fails.
pub(super) fn install_packages() -> anyhow::Result<PathBuf> {
    let dir = data_dir().ok_or_else(|| anyhow::anyhow!("neither XDG_DATA_HOME nor HOME is set"))?;
    std::fs::create_dir_all(&dir)?;
    let specs = locked_versions()?;
    let status = std::process::Command::new("npm")
        .args(["install", "--no-save", "--no-fund", "--no-audit", "--no-package-lock", "--prefix"])
        .arg(&dir)
        .args(&specs)
        .status()
        .map_err(|error| anyhow::anyhow!("cannot run npm: {error}; install Node.js and npm, or use --assets DIR"))?;
    if !status.success() {
        anyhow::bail!("npm install {} failed ({status})", specs.join(" "));
    }
    let missing: Vec<&str> =
        VENDOR.iter().filter(|(_, path)| !dir.join(path).is_file()).map(|(_, path)| *path).collect();
    if !missing.is_empty() {
        anyhow::bail!("npm installed the packages, but {} are missing from {}", missing.join(", "), dir.display());
    }
    Ok(dir)
}

/// `name@version` for each package, from the built-in lock file.
fn locked_versions() -> anyhow::Result<Vec<String>> {
    let lock: serde_json::Value = serde_json::from_str(PACKAGE_LOCK)?;
    PACKAGES
        .iter()
        .map(|name| {
            lock["packages"][format!("node_modules/{name}")]["version"]
                .as_str()
                .map(|version| format!("{name}@{version}"))
                .ok_or_else(|| anyhow::anyhow!("the page's lock file names no version of {name}"))
        })
        .collect()
}

fn default_candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    candidates.extend(data_dir());
    if let Some(bin) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        candidates.push(bin.join("web"));
        candidates.push(bin.join("../share/panehost/web"));
        candidates.push(bin.join("../../client/web"));
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("web"));
    candidates
}

async fn serve_file(path: &Path, name: &str) -> Response {
    match tokio::fs::read(path).await {
        Ok(bytes) => typed(Body::from(bytes), name),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => not_found(),
        Err(error) => {
            tracing::warn!(file = %path.display(), %error, "cannot read a page file");
            let mut response = Response::new(Body::from(format!("cannot read {name}: {error}\n")));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        }
    }
}

fn typed(body: Body, name: &str) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(name)));
    response
}

/// `app.js`, `style.css`: lowercase letters, digits, `-` and `_`, then
/// `.js` or `.css`; never a path.
fn is_page_file_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".js").or_else(|| name.strip_suffix(".css")) else {
        return false;
    };
    !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn not_found() -> Response {
    let mut response = Response::new(Body::from("404 Not Found\n"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A 500 page that says what is missing.
fn missing_page(problem: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>panehost web: page files missing</title>\
         </head>\n<body><h1>The web terminal cannot load</h1>\n<p>{}.</p>\n<p>The page's terminal comes from npm \
         packages, which are not built into panehost: run <code>panehost web --install-assets</code> once, or \
         start <code>panehost web --assets DIR</code> with a directory that holds them.</p></body></html>\n",
        escape_html(problem)
    );
    let mut response = Response::new(Body::from(html));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("panehost-web-assets-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn page_file_names_are_plain() {
        assert!(is_page_file_name("app.js"));
        assert!(is_page_file_name("style.css"));
        assert!(is_page_file_name("resume-store.js"));
        assert!(!is_page_file_name("../secret.js"));
        assert!(!is_page_file_name("index.html"));
        assert!(!is_page_file_name(".js"));
        assert!(!is_page_file_name("App.js"));
    }

    #[test]
    fn every_file_of_the_page_is_built_in() {
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        for entry in std::fs::read_dir(&web).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let of_the_page = name == "index.html" || is_page_file_name(&name);
            if of_the_page {
                assert!(PAGE.iter().any(|(page, _)| *page == name), "{name} is not built in: add it to PAGE");
            }
        }
    }

    #[test]
    fn the_lock_file_names_every_package() {
        let specs = locked_versions().unwrap();
        assert_eq!(specs.len(), PACKAGES.len());
        assert!(specs[0].starts_with("@xterm/xterm@"), "{specs:?}");
    }

    #[test]
    fn a_missing_page_or_missing_packages_are_named() {
        let empty = scratch("empty");
        let assets = Assets::locate(Some(&empty));
        assert!(assets.problem().unwrap().contains("index.html"));

        std::fs::write(empty.join("index.html"), "<!doctype html>").unwrap();
        let assets = Assets::locate(Some(&empty));
        let problem = assets.problem().unwrap();
        assert!(problem.contains("--install-assets"), "{problem}");

        for (_, path) in VENDOR {
            let file = empty.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "").unwrap();
        }
        assert_eq!(Assets::locate(Some(&empty)).problem(), None);
        let _ = std::fs::remove_dir_all(&empty);
    }

    #[tokio::test]
    async fn missing_packages_answer_500() {
        let dir = scratch("no-packages");
        std::fs::write(dir.join("index.html"), "<!doctype html>").unwrap();
        let assets = Assets::locate(Some(&dir));
        assert_eq!(assets.index().await.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(assets.vendor_file("xterm.mjs").await.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(assets.vendor_file("other.mjs").await.status(), StatusCode::NOT_FOUND);
        assert_eq!(assets.page_file("nothing.js").await.status(), StatusCode::NOT_FOUND);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn the_built_in_page_is_served_without_a_directory() {
        let assets = Assets { page_dir: None, packages_dir: None, searched: Vec::new() };
        let response = assets.page_file("app.js").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
    }
}
