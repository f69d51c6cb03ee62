import { parseEntityRef } from '@backstage/catalog-model';
import { useApi } from '@backstage/core-plugin-api';
import type {
  Cluster,
  Deployment,
  PreviewRequest,
  Release,
} from '@cnp/plugin-fleet-common';
import Button from '@material-ui/core/Button';
import Dialog from '@material-ui/core/Dialog';
import DialogActions from '@material-ui/core/DialogActions';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import TextField from '@material-ui/core/TextField';
import Alert from '@material-ui/lab/Alert';
import { FormEvent, useEffect, useMemo, useState } from 'react';
import { fleetApiRef } from '../../api';
import { useSubmission } from '../../hooks/useSubmission';
import { ImageField, isImageInvalid } from '../ImageField';
import { DialogButtons } from '../ConfirmDialog';
import {
  hasPreviewedCluster,
  PreviewButton,
  PreviewPanel,
  usePreview,
} from '../ManifestPreview';
import { isVersionInvalid, VersionField } from '../VersionField';
import { clusterHelperText, ClusterPicker } from './ClusterPicker';
import { PlacementNote, readPlacement } from './PlacementNote';
import {
  ReleaseOptions,
  ReleaseResult,
  useApplicationOf,
  type DeployTarget,
} from './ReleaseOptions';

export interface DeployDialogProps {
  open: boolean;
  entityRef: string;
  clusters: Cluster[];
  /** Clusters the component names (cnp.io/clusters): offered first, and its placement. */
  preferredClusters?: string[];
  /** The component's cnp.io/cluster-selector annotation: the rest of its placement. */
  clusterSelector?: string;
  /** From the entity's cnp.io/image annotation. */
  defaultImage?: string;
  /**
   * The entity's cnp.io/manifests-ref annotation: the component brings its own manifests, so the
   * dialog asks for a version (the image is optional) and shows a preview before it deploys.
   */
  manifestsRef?: string;
  onClose: () => void;
  onDeployed: (deployment: Deployment) => void;
  /**
   * With it, the dialog also offers a fleet release (to every placed cluster or to several), for
   * users allowed `fleet.release.manage` on the component; it stays open to show the result.
   */
  onReleased?: (release: Release) => void;
}

function firstDeployable(clusters: Cluster[], preferred: string[]): string {
  const ok = (c: Cluster) => c.status !== 'OFFLINE';
  return (
    clusters.find(c => preferred.includes(c.name) && ok(c))?.name ??
    clusters.find(ok)?.name ??
    ''
  );
}

function imageHelperText(
  image: string,
  imageInvalid: boolean,
  defaultImage: string | undefined,
  manifests: boolean,
): string {
  if (imageInvalid)
    return 'An image reference without spaces, e.g. ghcr.io/acme/payments:1.4.2';
  if (defaultImage && image === defaultImage)
    return 'From the cnp.io/image annotation';
  if (manifests) return 'Optional; empty: the images the manifests name';
  return ' ';
}

/** Why a component with its own manifests cannot be previewed (and so not deployed) yet. */
function previewUnavailableText(
  lookup: ReturnType<typeof useApplicationOf>,
): string | undefined {
  if (lookup.loading) return 'Looking up the application to preview…';
  if (lookup.error)
    return `Could not look up the application, so the deploy cannot be previewed: ${lookup.error}`;
  return undefined;
}

/**
 * Deploys the component to the cluster the user picks, or (with `onReleased`) releases it to
 * several clusters at once. OFFLINE clusters are in the list but disabled, with the reason; errors
 * are shown in the words the API used. Preview shows what the deploy would change on each target
 * cluster; for a component that brings its own manifests (`manifestsRef`) it is a step the user
 * must take: Deploy waits for the preview of the inputs as they are, and for a cluster in it that
 * is neither refused nor unreachable. Its first deploy, before it has a Fleet application, has
 * nothing to preview against and says so.
 */
export function DeployDialog(props: DeployDialogProps) {
  const { open, entityRef, clusters, onClose, onDeployed, onReleased } = props;
  const api = useApi(fleetApiRef);
  const preferred = useMemo(
    () => props.preferredClusters ?? [],
    [props.preferredClusters],
  );
  const ordered = useMemo(
    () =>
      [...clusters].sort(
        (a, b) =>
          Number(preferred.includes(b.name)) -
            Number(preferred.includes(a.name)) || a.name.localeCompare(b.name),
      ),
    [clusters, preferred],
  );
  const [cluster, setCluster] = useState('');
  const [image, setImage] = useState(props.defaultImage ?? '');
  const [replicas, setReplicas] = useState('');
  const [version, setVersion] = useState('');
  const manifests = props.manifestsRef !== undefined;
  const { submitting, error, setError, run } = useSubmission();
  const [target, setTarget] = useState<DeployTarget>('cluster');
  const [chosen, setChosen] = useState<string[]>([]);
  const [released, setReleased] = useState<Release>();
  // The application: what a release and a preview are made for.
  const lookup = useApplicationOf(entityRef, open);

  useEffect(() => {
    if (open) {
      setCluster(firstDeployable(ordered, preferred));
      setImage(props.defaultImage ?? '');
      setReplicas('');
      setVersion('');
      setError(undefined);
      setTarget('cluster');
      setChosen([]);
      setReleased(undefined);
    }
    // Reset only when the dialog opens, not on every poll of the cluster list.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const selected = clusters.find(c => c.name === cluster);
  // Where the placement takes the component besides the cluster picked.
  const placement = readPlacement({
    application: lookup.application,
    annotatedClusters: preferred,
    annotatedSelector: props.clusterSelector,
    clusters,
  });
  const replicasValue = replicas.trim() === '' ? undefined : Number(replicas);
  const replicasInvalid =
    replicasValue !== undefined &&
    (!Number.isInteger(replicasValue) ||
      replicasValue < 0 ||
      replicasValue > 1000);
  // With its own manifests a component may leave the image empty: the manifests name theirs.
  const imageInvalid =
    manifests && image.trim() === '' ? false : isImageInvalid(image);
  const versionInvalid = manifests && isVersionInvalid(version);
  const releasing = target !== 'cluster';
  const clusterInvalid = releasing
    ? !lookup.application || (target === 'several' && chosen.length === 0)
    : !selected || selected.status === 'OFFLINE';
  const inputInvalid =
    replicasInvalid || imageInvalid || versionInvalid || clusterInvalid;

  // What the deploy or release changes besides its clusters, as every call sends it.
  const changes = {
    ...(image.trim() !== '' && { image: image.trim() }),
    ...(replicasValue !== undefined && { replicas: replicasValue }),
    ...(manifests && version.trim() !== '' && { version: version.trim() }),
  };
  let previewClusters: string[] | undefined;
  if (target === 'cluster') previewClusters = [cluster];
  else if (target === 'several') previewClusters = chosen;
  const previewRequest: PreviewRequest = {
    ...(previewClusters && { clusters: previewClusters }),
    ...changes,
  };
  const { current: preview, load: loadPreview } = usePreview(
    lookup.application?.id,
    previewRequest,
    open,
  );
  const previewBlocker = manifests ? previewUnavailableText(lookup) : undefined;
  // Without an application, a first deploy has nothing to preview against.
  const mustPreview = manifests && lookup.application !== undefined;
  const previewed =
    preview.preview !== undefined && hasPreviewedCluster(preview.preview);
  const confirmDisabled =
    inputInvalid ||
    previewBlocker !== undefined ||
    (mustPreview && !previewed) ||
    preview.loading;

  const release = async (applicationId: string) => {
    const result = await api.createRelease(applicationId, {
      ...changes,
      ...(target === 'several' && { clusters: chosen }),
    });
    setReleased(result);
    onReleased?.(result);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (confirmDisabled) return;
    await run(async () => {
      if (releasing && lookup.application) {
        await release(lookup.application.id);
        return;
      }
      const deployment = await api.createDeployment({
        entityRef,
        cluster,
        ...changes,
      });
      onDeployed(deployment);
      onClose();
    });
  };

  return (
    <Dialog
      open={open}
      onClose={() => {
        if (!submitting) onClose(); // keep the dialog, and the API's answer, while a deploy runs
      }}
      fullWidth
      maxWidth={manifests ? 'md' : 'sm'}
      aria-labelledby="fleet-deploy-title"
    >
      <form onSubmit={submit} noValidate>
        <DialogTitle id="fleet-deploy-title">Deploy {entityRef}</DialogTitle>
        <DialogContent>
          {released && <ReleaseResult release={released} />}
          {error && (
            <Alert severity="error" role="alert" style={{ marginBottom: 16 }}>
              {error}
            </Alert>
          )}
          {onReleased && (
            <ReleaseOptions
              entityRef={entityRef}
              lookup={lookup}
              clusters={ordered}
              target={target}
              onTargetChange={setTarget}
              chosen={chosen}
              onChosenChange={setChosen}
            />
          )}
          {!releasing && (
            <>
              <ClusterPicker
                clusters={ordered}
                value={cluster}
                onChange={setCluster}
                helperText={clusterHelperText(clusters, selected)}
              />
              <PlacementNote
                componentName={parseEntityRef(entityRef).name}
                // Once the application's own placement is known.
                cluster={lookup.loading ? '' : cluster}
                reading={placement}
              />
            </>
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
            helperText={imageHelperText(
              image,
              imageInvalid,
              props.defaultImage,
              manifests,
            )}
          />
          <TextField
            fullWidth
            margin="normal"
            label="Replicas"
            type="number"
            value={replicas}
            onChange={e => setReplicas(e.target.value)}
            error={replicasInvalid}
            helperText={
              replicasInvalid
                ? 'A whole number from 0 to 1000'
                : "Leave empty to keep the application's replicas (new applications get the configured default)"
            }
            inputProps={{ min: 0, max: 1000, 'aria-label': 'Replicas' }}
          />
          {!released && (
            <PreviewStatus
              manifests={manifests}
              blocker={previewBlocker}
              mustPreview={mustPreview}
              confirmLabel={releasing ? 'Release' : 'Deploy'}
              shown={
                preview.preview !== undefined ||
                preview.loading ||
                preview.error !== undefined
              }
            />
          )}
          {!released && <PreviewPanel state={preview} />}
        </DialogContent>
        {released ? (
          <DialogActions>
            <Button onClick={onClose}>Close</Button>
          </DialogActions>
        ) : (
          <DialogButtons
            submitting={submitting}
            onCancel={onClose}
            confirmLabel={releasing ? 'Release' : 'Deploy'}
            confirmDisabled={confirmDisabled}
            secondary={
              lookup.application && (
                <PreviewButton
                  state={preview}
                  primary={mustPreview && !previewed}
                  disabled={inputInvalid || submitting}
                  onClick={loadPreview}
                />
              )
            }
          />
        )}
      </form>
    </Dialog>
  );
}

/**
 * What the user is to do about the preview of a component with its own manifests: wait for the
 * application, preview first, or (first deploy) know there is nothing to preview against.
 */
function PreviewStatus(props: {
  manifests: boolean;
  blocker?: string;
  mustPreview: boolean;
  confirmLabel: string;
  shown: boolean;
}) {
  if (!props.manifests || props.shown) return null;
  let text: string;
  if (props.blocker) text = props.blocker;
  else if (props.mustPreview)
    text = `Preview what this would change on each cluster: ${props.confirmLabel} is enabled once the preview is shown.`;
  else
    text =
      'This first deploy registers the application and creates every object of the manifests: Fleet previews from the next one on.';
  return (
    <Alert severity="info" role="status" style={{ marginTop: 8 }}>
      {text}
    </Alert>
  );
}
