import { placementText, readPlacement } from './PlacementNote';

/** `n` clusters labelled env=prod, c-0 to c-(n-1). */
function prodClusters(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    name: `c-${i}`,
    labels: { env: 'prod' },
  }));
}

describe('placementText', () => {
  it('names five clusters of a selector that places thousands, and counts the rest', () => {
    const reading = readPlacement({
      annotatedClusters: [],
      annotatedSelector: 'env=prod',
      clusters: prodClusters(10_000),
    });
    expect(placementText('payments', 'c-0', reading)).toEqual({
      severity: 'info',
      text: "payments is also placed on c-1, c-2, c-3, c-4, c-5 and 9,994 other clusters (from the component's cnp.io/cluster-selector env=prod): Fleet deploys it there too at its next reconcile, unless it runs there already.",
    });
  });

  it('names every cluster of a small placement', () => {
    const reading = readPlacement({
      annotatedClusters: [],
      annotatedSelector: 'env=prod',
      clusters: prodClusters(7),
    });
    expect(placementText('payments', 'c-0', reading)?.text).toMatch(
      /^payments is also placed on c-1, c-2, c-3, c-4, c-5 and c-6 \(from/,
    );
  });
});
