import { type AdmissionRequest, writtenResource } from '../../api/admission-review.js';
import type { CertificateSpec } from '../../api/certificate.js';
import type { CertificateRequest } from '../../api/certificate-request.js';
import { shortened } from '../../api/echoed-value.js';
import type { IssuerSpec } from '../../api/issuer.js';
import { CERT_MANAGER_GROUP, defaultIssuerRef } from '../../api/issuer-ref.js';
import type { KubeObject } from '../../api/meta.js';
import type { UserInfo } from '../../api/user-info.js';
import { cappedText } from '../../base/capped-text.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';
import { validateCertificateSpec } from '../../certificates/certificate-validation.js';
import type { AccessReviewer } from '../../controller/access-reviewer.js';
import { StoreError } from '../../store/errors.js';
import {
  approvalForbidden,
  approvalSignerNames,
  approveAttributes,
  newApprovalConditions,
  unknownSignerResource,
} from '../approval-rules.js';
import { certificateRequestShape, certificateShape, issuerShape } from '../cert-manager-shapes.js';
import {
  validateCertificateRequestCreate,
  validateCertificateRequestUpdate,
} from '../certificate-request-rules.js';
import { validateIssuerSpec } from '../issuer-rules.js';
import {
  requesterIdentityPatch,
  validateRequesterIdentity,
  validateRequesterIdentityUpdate,
} from '../requester-identity.js';
import type { AdmissionDecision, AdmissionHandlers } from './admission-server.js';
import { httpStatusOf } from './http-status.js';
import type { SignerResourceResolver } from './signer-resources.js';

/** What the approval check asks the cluster. */
export interface ApprovalAuthority {
  signerResources: Pick<SignerResourceResolver, 'resolve'>;
  reviewAccess: AccessReviewer;
}

/** How cert-manager's webhook refuses a request whose field rules fail (406 NotAcceptable). */
const REFUSED = { code: 406, reason: 'NotAcceptable' } as const;

type Target = 'certificaterequests' | 'certificates' | 'issuers' | 'clusterissuers' | undefined;

/** Which of the resources the webhook knows the request writes to. */
function targetOf(request: AdmissionRequest): Target {
  const { resource } = writtenResource(request);
  if (resource.group !== CERT_MANAGER_GROUP) return undefined;
  switch (resource.resource) {
    case 'certificaterequests':
    case 'certificates':
    case 'issuers':
    case 'clusterissuers':
      return resource.resource;
    default:
      return undefined;
  }
}

/** The field errors of the pure rules, by the cert-manager plugin that reports them. */
export interface ValidationPlan {
  /** CertificateRequest status writes that add Approved or Denied: the approval plugin must ask. */
  approval?: { request: CertificateRequest };
  identity: string[];
  validation: string[];
}

/** A review without the object its operation needs: answered 400 BadRequest, as cert-manager does. */
export class MissingObjectError extends Error {
  override readonly name = 'MissingObjectError';

  get errorKind(): ErrorKind {
    return 'CERT_CSI_REVIEW_OBJECT_MISSING';
  }
}

function objectOf(request: AdmissionRequest): KubeObject {
  if (!request.object)
    throw new MissingObjectError(`request.object is missing for ${request.operation}`);
  return request.object;
}

function oldObjectOf(request: AdmissionRequest): KubeObject {
  if (!request.oldObject) throw new MissingObjectError('request.oldObject is missing for UPDATE');
  return request.oldObject;
}

const SHAPES = {
  certificaterequests: certificateRequestShape,
  certificates: certificateShape,
  issuers: issuerShape,
  clusterissuers: issuerShape,
} as const;

/** object as the rules of target read it; ObjectShapeError names the first field of a wrong type. */
function decoded(
  target: Exclude<Target, undefined>,
  object: KubeObject,
  where: string,
): KubeObject {
  return SHAPES[target](object, where) as KubeObject;
}

/**
 * What the validating webhook checks for one request, decided without I/O: cert-manager's
 * ResourceValidation (per resource, create and update), CertificateRequestIdentity (create:
 * the requester's identity; update: immutable) and, for CertificateRequest status updates that
 * newly add Approved or Denied, the CertificateRequestApproval question the cluster answers.
 * Other resources and operations are not checked.
 */
export function validationPlan(request: AdmissionRequest): ValidationPlan {
  const target = targetOf(request);
  const plan: ValidationPlan = { identity: [], validation: [] };
  if (target === undefined) return plan;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return plan;
  const object = decoded(target, objectOf(request), 'request.object');
  const old =
    request.operation === 'UPDATE'
      ? decoded(target, oldObjectOf(request), 'request.oldObject')
      : undefined;
  switch (target) {
    case 'certificaterequests': {
      const cr = object as CertificateRequest;
      if (old === undefined) {
        plan.identity = validateRequesterIdentity(cr, request.userInfo);
        plan.validation = validateCertificateRequestCreate(cr);
        return plan;
      }
      const oldCr = old as CertificateRequest;
      plan.identity = validateRequesterIdentityUpdate(cr, oldCr);
      plan.validation = validateCertificateRequestUpdate(cr, oldCr);
      if (
        writtenResource(request).subResource === 'status' &&
        newApprovalConditions(cr, oldCr).length > 0
      ) {
        plan.approval = { request: cr };
      }
      return plan;
    }
    case 'certificates':
      plan.validation = validateCertificateSpec(
        (object as { spec?: CertificateSpec }).spec ?? ({} as CertificateSpec),
      );
      return plan;
    default:
      plan.validation = validateIssuerSpec((object as { spec?: IssuerSpec }).spec);
      return plan;
  }
}

/**
 * The answer of cert-manager's approval plugin: the issuer kind's resource through discovery
 * (unknown: Forbidden spec.issuerRef), then SubjectAccessReviews of the requester for `approve`
 * on the wildcard signer name, then the issuer's own; any allow admits, a failed review counts
 * as a deny. Returns the field errors, empty when allowed.
 */
export async function approvalErrors(
  authority: ApprovalAuthority,
  request: CertificateRequest,
  user: UserInfo,
): Promise<string[]> {
  const ref = defaultIssuerRef(request.spec?.issuerRef ?? { name: '' });
  const found = await authority.signerResources.resolve(ref.group, ref.kind);
  if (!found) return [unknownSignerResource(request)];
  const names = approvalSignerNames(found.signerResource, request, !found.namespaced);
  for (const name of names) {
    let allowed: boolean;
    try {
      allowed = await authority.reviewAccess(user, approveAttributes(name));
    } catch {
      // cert-manager's authorizer errors deny at once: an unanswerable question grants nothing.
      return [approvalForbidden(user.username, request)];
    }
    if (allowed) return [];
  }
  return [approvalForbidden(user.username, request)];
}

/**
 * The message of several field errors as cert-manager's webhook writes it (an apimachinery
 * aggregate): one error alone, several de-duplicated in brackets, comma separated; cut at
 * MESSAGE_LIMIT_BYTES (the rules list a few errors per list, so only many lists reach it).
 */
export function aggregateMessage(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return cappedText(unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`);
}

/**
 * cert-manager's webhook over the rules: the mutating endpoint sets the requester's identity on
 * CertificateRequests at create; the validating endpoint runs the plugins in cert-manager's
 * order (approval, identity, resource validation) and refuses with all their errors at once.
 * A review without the object its operation needs is refused with 400; a failed discovery
 * refuses the approval with its error, as cert-manager's does.
 */
export function certManagerAdmission(authority: ApprovalAuthority): AdmissionHandlers {
  return {
    async mutate(request): Promise<AdmissionDecision> {
      if (targetOf(request) !== 'certificaterequests' || request.operation !== 'CREATE') {
        return { allowed: true };
      }
      try {
        const cr = objectOf(request) as CertificateRequest;
        return { allowed: true, patch: requesterIdentityPatch(cr, request.userInfo) };
      } catch (err) {
        return badRequest(err);
      }
    },
    async validate(request): Promise<AdmissionDecision> {
      let plan: ValidationPlan;
      try {
        plan = validationPlan(request);
      } catch (err) {
        return badRequest(err);
      }
      let approval: string[] = [];
      if (plan.approval) {
        try {
          approval = await approvalErrors(authority, plan.approval.request, request.userInfo);
        } catch (err) {
          // The API server's answer (or its absence) is worth telling; anything else is a fault
          // of ours, which the server answers as an internal error without its text.
          if (!(err instanceof StoreError)) throw err;
          approval = [`failed to look up the issuer's resource: ${shortened(err.message)}`];
        }
      }
      const errors = [...approval, ...plan.identity, ...plan.validation];
      if (errors.length === 0) return { allowed: true };
      return { allowed: false, ...REFUSED, message: aggregateMessage(errors) };
    },
  };
}

/**
 * A review the rules cannot read, as cert-manager answers one it cannot decode (400
 * BadRequest): no object, or one whose fields are not of the CRD's types (the API server
 * checks the schema only after the mutating webhooks). Any other error is no fault of the
 * request: it is thrown on, for the server to answer as an internal error.
 */
function badRequest(err: unknown): AdmissionDecision {
  const code = httpStatusOf(err);
  if (code !== 400) throw err;
  return { allowed: false, code, reason: 'BadRequest', message: errorMessage(err) };
}
