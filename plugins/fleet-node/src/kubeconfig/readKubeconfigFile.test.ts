import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  MAX_KUBECONFIG_BYTES,
  readAtMost,
  readKubeconfigFile,
  type ReadableHandle,
} from './readKubeconfigFile';

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

  it("holds a buffer of the file's size while reading, not one of the bound", async () => {
    const file = path.join(dir, 'small.yaml');
    fs.writeFileSync(file, KUBECONFIG);
    const sizes: number[] = [];
    const spies = (['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const).map(
      name => {
        const original = Buffer[name].bind(Buffer);
        return jest
          .spyOn(Buffer, name)
          .mockImplementation((size: number, ...rest: any[]) => {
            sizes.push(size);
            return (original as any)(size, ...rest);
          });
      },
    );
    try {
      expect((await readKubeconfigFile(file)).kind).toBe('ok');
    } finally {
      spies.forEach(spy => spy.mockRestore());
    }
    expect(Math.max(0, ...sizes)).toBeLessThan(64 * 1024);
  });
});

/** A file whose content is `content`, whatever size its fstat said. */
function handleOf(
  content: Buffer,
  chunk = 1000,
): ReadableHandle & {
  buffers: number[];
} {
  const buffers: number[] = [];
  return {
    buffers,
    read: async (buffer, offset, length, position) => {
      buffers.push(buffer.length);
      const n = Math.max(0, Math.min(length, chunk, content.length - position));
      content.copy(buffer, offset, position, position + n);
      return { bytesRead: n };
    },
  };
}

describe('readAtMost', () => {
  it('reads a file of the size its fstat said into a buffer of that size (one byte more)', async () => {
    const content = Buffer.from('x'.repeat(2500));
    const handle = handleOf(content);
    expect((await readAtMost(handle, 2500, 10_000))?.toString()).toBe(
      content.toString(),
    );
    expect(new Set(handle.buffers)).toEqual(new Set([2501]));
  });

  it('reads a file that grew after its fstat whole, growing the buffer', async () => {
    const content = Buffer.from('y'.repeat(9000));
    const handle = handleOf(content);
    expect((await readAtMost(handle, 100, 10_000))?.toString()).toBe(
      content.toString(),
    );
    expect(Math.max(...handle.buffers)).toBeLessThanOrEqual(10_001);
  });

  it('stops at the bound when the file grew past it, holding at most the bound and one byte', async () => {
    const handle = handleOf(Buffer.alloc(50_000, 0x20));
    expect(await readAtMost(handle, 10, 10_000)).toBeUndefined();
    expect(Math.max(...handle.buffers)).toBe(10_001);
  });

  it('reads an empty file, and one of exactly the bound', async () => {
    expect((await readAtMost(handleOf(Buffer.alloc(0)), 0, 10))?.length).toBe(
      0,
    );
    expect(
      (await readAtMost(handleOf(Buffer.alloc(10, 0x41)), 10, 10))?.toString(),
    ).toBe('AAAAAAAAAA');
    expect(
      await readAtMost(handleOf(Buffer.alloc(11)), 10, 10),
    ).toBeUndefined();
  });
});
