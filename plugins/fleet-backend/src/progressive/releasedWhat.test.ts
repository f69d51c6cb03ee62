import { releasedWhat } from './releasedWhat';

describe('releasedWhat', () => {
  it('names the version of the manifests a release puts out', () => {
    expect(releasedWhat({ version: 'v2' })).toBe('version v2');
  });

  it('names the image set in those manifests too', () => {
    expect(releasedWhat({ version: 'v2', image: 'inventory:2' })).toBe(
      'version v2 with image inventory:2',
    );
  });

  it('names the image of an image release, else the current image', () => {
    expect(releasedWhat({ image: 'nginx:1.29' })).toBe('nginx:1.29');
    expect(releasedWhat({})).toBe('the current image');
  });
});
