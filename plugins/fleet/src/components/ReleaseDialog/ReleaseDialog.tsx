import type {
  Cluster,
  PreviewRequest,
  Release,
  StageStatus,
} from '@cnp/plugin-fleet-common';
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
import {
  hasPreviewedCluster,
  PreviewButton,
  PreviewPanel,
  usePreview,
} from '../ManifestPreview';
import { isVersionInvalid, VersionField } from '../VersionField';
import { exampleStrategy } from './exampleStrategy';
import { parseStrategy } from './parseStrategy';
import { StageField } from './StageField';
import { analysisHelperText, useAnalysisAddress } from './useAnalysisAddress';

function imageHelper(imageInvalid: boolean, manifests: boolean): string {
  if (imageInvalid)
    return 'An image reference without spaces, e.g. ghcr.io/acme/payments:1.5.0';
  if (manifests) return 'Optional; empty: the images the manifests name';
  return ' ';
}

/** What the release goes to, as the clusters picked say: never "none picked" once some are. */
function clustersHelperText(chosen: string[], stage: string): string {
  if (chosen.length > 0)
    return `Releasing to ${chosen.join(', ')} only${
      stage ? ` (of the stage ${stage})` : ''
    }`;
  return stage
    ? 'None picked: every cluster of the stage'
    : 'None picked: every cluster the application is placed on';
}

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
  /**
   * The entity's cnp.io/manifests-ref annotation: the component brings its own manifests, so the
   * dialog asks for a version (the image is optional) and previews before it starts the release.
   */
  manifestsRef?: string;
  /** The application's stages in order: with some, the dialog offers to release to one. */
  stages?: StageStatus[];
  onClose: () => void;
  onReleased: (release: Release) => void;
}

/**
 * Starts a fleet release of the component: an image, optionally only some clusters, and with
 * "Progressive (strategy)" a strategy in YAML (waves, canary steps, analysis, rollback). A YAML
 * error is shown under the text; the API's refusal (e.g. a 400 on an invalid strategy) in its
 * own words. Preview shows what the release would change on its clusters (the ones picked, else
 * the API's choice); for a component that brings its own manifests (`manifestsRef`) it comes
 * first: "Start release" waits for the preview of the inputs as they are, with a cluster in it
 * that is neither refused nor unreachable.
 */
export function ReleaseDialog(props: ReleaseDialogProps) {
  const { open, applicationId, clusters, placedClusters, onClose } = props;
  const api = useApi(fleetApiRef);
  const [image, setImage] = useState(props.defaultImage ?? '');
  const [chosen, setChosen] = useState<string[]>([]);
  const [progressive, setProgressive] = useState(false);
  // The user's own strategy text; until they edit it, the example for the clusters picked.
  const [yamlEdited, setYamlEdited] = useState<string>();
  const [version, setVersion] = useState('');
  const [stage, setStage] = useState('');
  const stages = props.stages ?? [];
  const stageClusters = stages.find(s => s.name === stage)?.clusters ?? [];
  const manifests = props.manifestsRef !== undefined;
  const { submitting, error, setError, run } = useSubmission();

  useEffect(() => {
    if (open) {
      setImage(props.defaultImage ?? '');
      setChosen([]);
      setProgressive(false);
      setYamlEdited(undefined);
      setVersion('');
      setStage('');
      setError(undefined);
    }
    // Reset only when the dialog opens, not on every poll of the card.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  // The example follows the clusters picked and the Prometheus the backend allows.
  const analysis = useAnalysisAddress(open);
  const yamlText =
    yamlEdited ??
    exampleStrategy(chosen.length ? chosen : placedClusters, analysis.address);

  const parsed = progressive ? parseStrategy(yamlText) : {};
  // With its own manifests a component may leave the image empty: the manifests name theirs.
  const imageInvalid =
    manifests && image.trim() === '' ? false : isImageInvalid(image);
  const versionInvalid = manifests && isVersionInvalid(version);
  const inputInvalid =
    imageInvalid || versionInvalid || parsed.error !== undefined;

  // The release's own inputs, as the preview and the release both send them.
  const request: PreviewRequest = {
    ...(image.trim() !== '' && { image: image.trim() }),
    ...(chosen.length > 0 && { clusters: chosen }),
    ...(manifests && version.trim() !== '' && { version: version.trim() }),
  };
  // A stage's release goes to the stage's clusters (or those picked among them): the preview too.
  const previewRequest: PreviewRequest =
    chosen.length === 0 && stageClusters.length > 0
      ? { ...request, clusters: stageClusters }
      : request;
  const { current: preview, load: loadPreview } = usePreview(
    applicationId,
    previewRequest,
    open,
  );
  const previewed =
    preview.preview !== undefined && hasPreviewedCluster(preview.preview);
  const confirmDisabled =
    inputInvalid || preview.loading || (manifests && !previewed);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (confirmDisabled) return;
    await run(async () => {
      const release = await api.createRelease(applicationId, {
        ...request,
        ...(stage !== '' && { stage }),
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
          {props.manifestsRef !== undefined && (
            <VersionField
              value={version}
              onChange={setVersion}
              manifestsRef={props.manifestsRef}
            />
          )}
          <ImageField
            value={image}
            onChange={setImage}
            helperText={imageHelper(imageInvalid, manifests)}
          />
          {stages.length > 0 && (
            <StageField stages={stages} value={stage} onChange={setStage} />
          )}
          <FormControl component="fieldset" margin="normal" fullWidth>
            <FormLabel component="legend">Clusters (optional)</FormLabel>
            <ClusterChoice
              row
              clusters={clusters}
              chosen={chosen}
              onChange={setChosen}
            />
            <FormHelperText>{clustersHelperText(chosen, stage)}</FormHelperText>
          </FormControl>
          <FormControlLabel
            control={
              <Switch
                checked={progressive}
                onChange={e => setProgressive(e.target.checked)}
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
              onChange={e => setYamlEdited(e.target.value)}
              error={parsed.error !== undefined}
              helperText={
                parsed.error ??
                `Waves of clusters, canary steps per cluster, analysis and rollback. ${
                  yamlEdited === undefined ? analysisHelperText(analysis) : ''
                }`
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
          {manifests &&
            !preview.preview &&
            !preview.loading &&
            !preview.error && (
              <Alert severity="info" role="status" style={{ marginTop: 8 }}>
                Preview what this release would change on each cluster: Start
                release is enabled once the preview is shown.
              </Alert>
            )}
          <PreviewPanel state={preview} />
        </DialogContent>
        <DialogButtons
          submitting={submitting}
          onCancel={onClose}
          confirmLabel="Start release"
          confirmDisabled={confirmDisabled}
          secondary={
            <PreviewButton
              state={preview}
              primary={manifests && !previewed}
              disabled={inputInvalid || submitting}
              onClick={loadPreview}
            />
          }
        />
      </form>
    </Dialog>
  );
}
