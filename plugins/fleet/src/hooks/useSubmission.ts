import { useCallback, useState } from 'react';
import { apiErrorMessage } from '../api';

/**
 * A dialog's submission: `run` marks it submitting, clears the last error, and shows a failure
 * in the words the API used; the dialog keeps its input while it runs.
 */
export function useSubmission() {
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setSubmitting(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(apiErrorMessage(e));
    } finally {
      setSubmitting(false);
    }
  }, []);
  return { submitting, error, setError, run };
}
