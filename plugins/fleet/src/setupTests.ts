import '@testing-library/jest-dom';
import { configure } from '@testing-library/react';

// CI runs these next to backend suites on a 2-core machine: give findBy* and tests room to wait
// for lazy-loaded components instead of failing on a busy moment.
configure({ asyncUtilTimeout: 5_000 });
jest.setTimeout(30_000);
