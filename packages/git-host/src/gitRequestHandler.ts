import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { readCgiHead } from './cgi';

/** Options of {@link createGitRequestHandler}. */
export interface GitRequestHandlerOptions {
  /** The folder holding the bare repositories, e.g. `<root>/inventory.git`. */
  root: string;
  /** The CGI program to run; Git's own `git-http-backend` (from `git --exec-path`) unless told. */
  httpBackend?: string;
}

/**
 * Answers one request to the Git host. Its path is the part after the
 * host's base, `/<repository>.git/info/refs` and so on: mounted on an
 * Express router, that is the path below the mount point.
 */
export type GitRequestHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
) => void;

let backendPath: Promise<string> | undefined;

/** Where Git keeps `git-http-backend`, asked once from `git --exec-path`. */
function findHttpBackend(): Promise<string> {
  backendPath ??= promisify(execFile)('git', ['--exec-path']).then(
    ({ stdout }) => path.join(stdout.trim(), 'git-http-backend'),
  );
  return backendPath;
}

function reply(res: http.ServerResponse, status: number, message: string) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

/**
 * The repository part of a request path: everything before the first Git
 * endpoint (`/info/refs`, `/git-upload-pack`, `/HEAD`, `/objects/...`).
 */
function repositoryOf(pathname: string): string | undefined {
  const match = pathname.match(
    /^\/(.+?)\/(?:info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/.*|info\/.*)$/,
  );
  return match?.[1];
}

/**
 * The repository part of a decoded request path, when the path is safe to
 * hand to Git: no `..`, `.`, empty or NUL-holding segment anywhere, and the
 * repository resolves to a folder inside `root`. Otherwise `undefined`.
 */
function repositoryIn(root: string, pathInfo: string): string | undefined {
  const segments = pathInfo.slice(1).split('/');
  if (
    segments.some(
      segment =>
        segment === '' ||
        segment === '.' ||
        segment === '..' ||
        segment.includes('\0'),
    )
  ) {
    return undefined;
  }
  const repository = repositoryOf(pathInfo);
  if (!repository) return undefined;
  const relative = path.relative(root, path.resolve(root, repository));
  if (
    relative === '' ||
    relative === '..' ||
    relative.startsWith(`..${path.sep}`) ||
    path.isAbsolute(relative)
  ) {
    return undefined;
  }
  return repository;
}

/**
 * The request path with its percent-escapes decoded, once, as Git will see it
 * in `PATH_INFO`; `undefined` when an escape is malformed.
 */
function decodePath(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}

/** The CGI environment for one request (RFC 3875 plus what Git reads). */
function cgiEnvironment(
  req: http.IncomingMessage,
  url: URL,
  pathInfo: string,
  root: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    SERVER_SOFTWARE: '@cnp/git-host',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: pathInfo,
    QUERY_STRING: url.search.replace(/^\?/, ''),
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
  };
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  if (header('content-type')) env.CONTENT_TYPE = header('content-type');
  if (header('content-length')) env.CONTENT_LENGTH = header('content-length');
  // Git reads a gzip request body and protocol v2 from these two.
  if (header('content-encoding')) {
    env.HTTP_CONTENT_ENCODING = header('content-encoding');
  }
  if (header('git-protocol')) env.GIT_PROTOCOL = header('git-protocol');
  return env;
}

/** Runs `git http-backend` for one request and streams its answer back. */
async function runHttpBackend(
  program: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  pathInfo: string,
  root: string,
): Promise<void> {
  const child = spawn(program, [], {
    env: cgiEnvironment(req, url, pathInfo, root),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', chunk => {
    stderr = (stderr + String(chunk)).slice(-2000);
  });
  const exited = new Promise<number | null>(resolve => {
    child.on('close', code => resolve(code));
  });
  const failed = new Promise<never>((_, reject) => {
    child.on('error', reject);
  });
  failed.catch(() => {});
  child.stdin.on('error', () => {});
  req.pipe(child.stdin);
  res.on('close', () => {
    if (child.exitCode === null) child.kill();
  });

  const head = await Promise.race([readCgiHead(child.stdout), failed]);
  if (!head) {
    const code = await Promise.race([exited, failed]);
    reply(
      res,
      502,
      `${program} answered no CGI headers (exit code ${code}): ${
        stderr.trim() || 'no error output'
      }`,
    );
    return;
  }
  res.writeHead(head.status, head.headers);
  child.stdout.on('error', () => res.destroy());
  child.stdout.pipe(res);
  await exited;
}

/**
 * The request handler of a read-only Git host serving every bare repository
 * under `root` over Git's smart HTTP protocol (clone and fetch, protocol v0
 * to v2), by running Git's own `git http-backend` as a CGI for each request.
 * A push (`git-receive-pack`) is refused with 403. A repository that does not
 * exist, or a path whose decoded segments could leave `root`, is a 404; a
 * malformed percent-escape is a 400; a backend that cannot run or answers no
 * headers is a 502. It answers every request itself, so it can be served by
 * a plain `http.Server` or mounted on an Express router.
 */
export async function createGitRequestHandler(
  options: GitRequestHandlerOptions,
): Promise<GitRequestHandler> {
  const root = path.resolve(options.root);
  const program = options.httpBackend ?? (await findHttpBackend());
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://git-host');
    const pathInfo = decodePath(url.pathname);
    if (pathInfo === undefined) {
      req.resume();
      reply(
        res,
        400,
        `Malformed percent-escape in the request path: ${url.pathname}`,
      );
      return;
    }
    // Git sees the decoded path, and acts on the last `service` value, so
    // the checks read the decoded path and every `service` value.
    if (
      pathInfo.endsWith('/git-receive-pack') ||
      url.searchParams
        .getAll('service')
        .some(service => service !== 'git-upload-pack')
    ) {
      req.resume();
      reply(res, 403, 'This Git host is read-only: pushing is not allowed');
      return;
    }
    if (!repositoryIn(root, pathInfo)) {
      req.resume();
      reply(res, 404, `Not a Git repository path: ${url.pathname}`);
      return;
    }
    runHttpBackend(program, req, res, url, pathInfo, root).catch(error =>
      reply(res, 502, `${program} failed: ${error.message ?? error}`),
    );
  };
}
