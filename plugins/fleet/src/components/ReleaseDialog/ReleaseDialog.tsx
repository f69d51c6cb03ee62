import type { Cluster, Release } from '@cnp/plugin-fleet-common';
import Dialog from '@material-ui/core/Dialog';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import FormControl from '@material-ui/core/FormControl';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import FormHelperText from '@material-ui/core/FormHelperText';
import FormLabel from '@material-ui/core/FormLabel';
import Switch from '@material-ui/core/Switch';
import TextField from '@material-ui/core/TextField';
import Alert from '@material-ui/lab/Alert';
import { useApi } from '@backstage/core-plugin-api';
import { FormEvent, useEffect, useState } from 'react';
import { fleetApiRef } from '../../api';
import { useSubmission } from '../../hooks/useSubmission';
import { ClusterChoice } from '../ClusterChoice';
import { ImageField, isImageInvalid } from '../ImageField';
import { DialogButtons } from '../ConfirmDialog';
import { exampleStrategy } from './exampleStrategy';
import { parseStrategy } from './parseStrategy';

/** @public */
export interface ReleaseDialogProps {
  open: boolean;
  /** The component's name, for the title. */
  componentName: string;
  applicationId: string;
  /** Every cluster Fleet knows, offered to narrow the release down. */
  clusters: Cluster[];
  /** The clusters the application runs on: what the example strategy's waves name. */
  placedClusters: string[];
  /** The entity's cnp.io/image annotation, or the image it runs now. */
  defaultImage?: string;
  onClose: () => void;
  onReleased: (release: Release) => void;
}

/**
 * Starts a fleet release of the component: an image, optionally only some clusters, and with
 * "Progressive (strategy)" a strategy in YAML (waves, canary steps, analysis, rollback). A YAML
 * error is shown under the text; the API's refusal (e.g. a 400 on an invalid strategy) in its
 * own words.
 */
export function ReleaseDialog(props: ReleaseDialogProps) {
  const { open, applicationId, clusters, placedClusters, onClose } = props;
  const api = useApi(fleetApiRef);
  const [image, setImage] = useState(props.defaultImage ?? '');
  const [chosen, setChosen] = useState<string[]>([]);
  const [progressive, setProgressive] = useState(false);
  const [yamlText, setYamlText] = useState('');
  const { submitting, error, setError, run } = useSubmission();

  useEffect(() => {
    if (open) {
      setImage(props.defaultImage ?? '');
      setChosen([]);
      setProgressive(false);
      setYamlText(exampleStrategy(placedClusters));
      setError(undefined);
    }
    // Reset only when the dialog opens, not on every poll of the card.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const toggleProgressive = (on: boolean) => {
    setProgressive(on);
    // The example follows the clusters picked, until the user edits it.
    if (on && yamlText === exampleStrategy(placedClusters) && chosen.length)
      setYamlText(exampleStrategy(chosen));
  };

  const parsed = progressive ? parseStrategy(yamlText) : {};
  const imageInvalid = isImageInvalid(image);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (imageInvalid || parsed.error) return;
    await run(async () => {
      const release = await api.createRelease(applicationId, {
        image: image.trim(),
        ...(chosen.length > 0 && { clusters: chosen }),
        ...(parsed.strategy && { strategy: parsed.strategy }),
      });
      props.onReleased(release);
      onClose();
    });
  };

  return (
    <Dialog
      open={open}
      onClose={() => {
        if (!submitting) onClose();
      }}
      fullWidth
      maxWidth="md"
      aria-labelledby="fleet-release-title"
    >
      <form onSubmit={submit} noValidate>
        <DialogTitle id="fleet-release-title">
          Release {props.componentName}
        </DialogTitle>
        <DialogContent>
          {error && (
            <Alert severity="error" role="alert" style={{ marginBottom: 16 }}>
              {error}
            </Alert>
          )}
          <ImageField
            value={image}
            onChange={setImage}
            helperText={
              imageInvalid
                ? 'An image reference without spaces, e.g. ghcr.io/acme/payments:1.5.0'
                : ' '
            }
          />
          <FormControl component="fieldset" margin="normal" fullWidth>
            <FormLabel component="legend">Clusters (optional)</FormLabel>
            <ClusterChoice
              row
              clusters={clusters}
              chosen={chosen}
              onChange={setChosen}
            />
            <FormHelperText>
              None picked: every cluster the application is placed on
            </FormHelperText>
          </FormControl>
          <FormControlLabel
            control={
              <Switch
                checked={progressive}
                onChange={e => toggleProgressive(e.target.checked)}
                color="primary"
              />
            }
            label="Progressive (strategy)"
          />
          {progressive && (
            <TextField
              fullWidth
              multiline
              minRows={12}
              margin="normal"
              variant="outlined"
              label="Strategy (YAML)"
              value={yamlText}
              onChange={e => setYamlText(e.target.value)}
              error={parsed.error !== undefined}
              helperText={
                parsed.error ??
                'Waves of clusters, canary steps per cluster, Prometheus analysis and rollback'
              }
              inputProps={{
                'aria-label': 'Strategy (YAML)',
                spellCheck: false,
                style: { fontFamily: 'monospace', fontSize: 13 },
              }}
              FormHelperTextProps={
                {
                  role: parsed.error ? 'alert' : undefined,
                  style: {
                    whiteSpace: 'pre-wrap',
                    fontFamily: parsed.error ? 'monospace' : undefined,
                  },
                } as object
              }
            />
          )}
        </DialogContent>
        <DialogButtons
          submitting={submitting}
          onCancel={onClose}
          confirmLabel="Start release"
          confirmDisabled={imageInvalid || parsed.error !== undefined}
        />
      </form>
    </Dialog>
  );
}
