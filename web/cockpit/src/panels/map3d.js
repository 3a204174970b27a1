// map3d: voxels as one instanced mesh in three.js with an orbit camera; the decoder hands over
// Float32 centres and colours in the layout InstancedMesh takes. The optional pose shows as a cone.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { Panel } from './panel.js';

export class Map3dPanel extends Panel {
  #renderer;
  #scene = new THREE.Scene();
  #camera = new THREE.PerspectiveCamera(55, 1, 0.05, 500);
  #controls;
  #mesh = null;
  #capacity = 0;
  #res = 0;
  #marker;
  #matrix = new THREE.Matrix4();
  #colour = new THREE.Color();

  constructor(ctx) {
    super(ctx);
    this.#renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.#renderer.setClearColor(0x151922);
    this.#renderer.domElement.className = 'map3d-canvas';
    this.#renderer.domElement.tabIndex = 0;
    this.#renderer.domElement.setAttribute(
      'aria-label',
      `${this.spec.title}: drag to orbit, wheel to zoom`,
    );
    this.body.append(this.#renderer.domElement);
    this.#camera.position.set(6, -8, 7);
    this.#camera.up.set(0, 0, 1);
    this.#controls = new OrbitControls(this.#camera, this.#renderer.domElement);
    this.#controls.listenToKeyEvents?.(this.#renderer.domElement);
    this.#scene.add(new THREE.AmbientLight(0xffffff, 0.7));
    const sun = new THREE.DirectionalLight(0xffffff, 0.8);
    sun.position.set(3, -5, 10);
    this.#scene.add(sun);
    this.#scene.add(new THREE.GridHelper(20, 20, 0x3a4252, 0x262c38).rotateX(Math.PI / 2));
    this.#marker = new THREE.Mesh(
      new THREE.ConeGeometry(0.15, 0.45, 16),
      new THREE.MeshStandardMaterial({ color: 0x35c2ff }),
    );
    this.#marker.rotation.z = -Math.PI / 2;
    this.#marker.visible = false;
    this.#scene.add(this.#marker);
    new ResizeObserver(() => this.#resize()).observe(this.body);
    this.#controls.addEventListener('change', () => this.#paint());
  }

  render(ch, dec) {
    if (dec.kind === 'pose') {
      const p = dec.value;
      this.#marker.position.set(p.x, p.y, p.z + 0.2);
      this.#marker.rotation.set(0, 0, p.yaw - Math.PI / 2);
      this.#marker.visible = true;
    } else if (dec.kind === 'voxels') {
      const { positions, colours } = dec.value;
      const n = positions.length / 3;
      const res = this.ctx.lastVoxelRes ?? 0.1;
      // n is within the decoder's bound (kMaxVoxels, src/decode/limits.hpp): a larger count was
      // refused before anything was inflated, so the instance buffer never outgrows it.
      this.#ensureCapacity(Math.max(n, 1), res);
      for (let i = 0; i < n; i++) {
        this.#matrix.makeTranslation(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]);
        this.#mesh.setMatrixAt(i, this.#matrix);
        this.#mesh.setColorAt(
          i,
          this.#colour.setRGB(colours[3 * i], colours[3 * i + 1], colours[3 * i + 2]),
        );
      }
      this.#mesh.count = n;
      this.#mesh.instanceMatrix.needsUpdate = true;
      if (this.#mesh.instanceColor) this.#mesh.instanceColor.needsUpdate = true;
      this.el.dataset.voxels = String(n);
    }
    this.#paint();
  }

  onFrame(frame) {
    if (frame.header.meta && typeof frame.header.meta.res === 'number')
      this.ctx.lastVoxelRes = frame.header.meta.res;
    super.onFrame(frame);
  }

  #ensureCapacity(n, res) {
    if (this.#mesh && n <= this.#capacity && res === this.#res) return;
    if (this.#mesh) {
      this.#scene.remove(this.#mesh);
      this.#mesh.geometry.dispose();
      this.#mesh.material.dispose();
    }
    this.#capacity = Math.max(n, this.#capacity * 2, 1024);
    this.#res = res;
    const box = new THREE.BoxGeometry(res * 0.95, res * 0.95, res * 0.95);
    this.#mesh = new THREE.InstancedMesh(box, new THREE.MeshStandardMaterial(), this.#capacity);
    this.#mesh.count = 0;
    this.#scene.add(this.#mesh);
  }

  #resize() {
    const { clientWidth: w, clientHeight: h } = this.body;
    this.#renderer.setSize(Math.max(1, w), Math.max(1, h), false);
    this.#camera.aspect = Math.max(1, w) / Math.max(1, h);
    this.#camera.updateProjectionMatrix();
    this.#paint();
  }

  // Pose arrives at 20 Hz and voxels at 1 Hz: coalesce repaints into one per animation frame, so
  // a busy page (or software GL) never renders more often than it can show.
  #paintQueued = false;
  #paint() {
    if (this.#paintQueued) return;
    this.#paintQueued = true;
    requestAnimationFrame(() => {
      this.#paintQueued = false;
      this.#renderer.render(this.#scene, this.#camera);
    });
  }

  destroy() {
    this.#controls.dispose();
    this.#renderer.dispose();
    super.destroy();
  }
}
