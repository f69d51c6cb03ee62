import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_KUBECONFIG_BYTES, readKubeconfigFile } from './readKubeconfigFile';

const KUBECONFIG = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]',
  'users: [{ name: u, user: { token: t } }]',
  'contexts: [{ name: x, context: { cluster: c, user: u } }]',
  'current-context: x',
  '',
].join('\n');

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-read-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readKubeconfigFile', () => {
  it('reads a regular file through one descriptor', async () => {
    const file = path.join(dir, 'a.yaml');
    fs.writeFileSync(file, KUBECONFIG);
    const read = await readKubeconfigFile(file, fs.statSync(file));
    expect(read.kind).toBe('ok');
  });

  it('refuses a file swapped in after the check (another inode), without reading it', async () => {
    const checkedFile = path.join(dir, 'checked.yaml');
    fs.writeFileSync(checkedFile, KUBECONFIG);
    const checked = fs.statSync(checkedFile);
    // Between the check and the open, the path now names another file.
    fs.renameSync(checkedFile, path.join(dir, 'moved.yaml'));
    fs.writeFileSync(checkedFile, KUBECONFIG.replace('t }', 'stolen }'));
    expect(await readKubeconfigFile(checkedFile, checked)).toEqual({
      kind: 'skipped',
      reason: 'not the file that was checked (it changed in between)',
    });
  });

  it('refuses a checked path that became a symlink (to /dev/zero) or a FIFO, never blocking', async () => {
    const file = path.join(dir, 'b.yaml');
    fs.writeFileSync(file, KUBECONFIG);
    const checked = fs.statSync(file);
    fs.rmSync(file);
    fs.symlinkSync('/dev/zero', file);
    expect(await readKubeconfigFile(file, checked)).toEqual({
      kind: 'skipped',
      reason: 'a symlink where a file was checked',
    });
    fs.rmSync(file);
    execFileSync('mkfifo', [file]);
    // No writer ever opens the FIFO: a blocking open would hang this test.
    expect(await readKubeconfigFile(file, checked)).toEqual({
      kind: 'skipped',
      reason: 'not a regular file',
    });
  });

  it('stops reading at the bound', async () => {
    const file = path.join(dir, 'big.yaml');
    fs.writeFileSync(file, Buffer.alloc(MAX_KUBECONFIG_BYTES + 10, 0x20));
    expect(await readKubeconfigFile(file)).toEqual({
      kind: 'skipped',
      reason: `larger than ${MAX_KUBECONFIG_BYTES} bytes`,
    });
  });
});
