// Independent reference for tests/datasets/test_generators.cpp (MoaRandomTree*): written from the
// algorithm description in shared/reference/streaming_trees.md §1.4 and MANIFEST.md §5.1 and run
// with the JDK's own java.util.Random, so the C++ port's RNG is checked against the real one.
// Run: java MoaRandomTreeReference.java   (prints the values the test embeds)
import java.util.ArrayList;
import java.util.Random;

public class MoaRandomTreeReference {
  static int numClasses, numNominals, numNumerics, numVals, maxDepth, firstLeaf;
  static double leafFraction;
  static ArrayList<int[]> structure = new ArrayList<>();  // unused; node count via counter
  static int nodeCount = 0, leafCount = 0;

  static class Node {
    int cls; int att = -1; double value; Node[] kids;
  }

  static Node node(int depth, ArrayList<Integer> cand, double[] mn, double[] mx, Random r) {
    nodeCount++;
    if (depth >= maxDepth || (depth >= firstLeaf && leafFraction >= 1.0 - r.nextDouble())) {
      Node l = new Node();
      l.cls = r.nextInt(numClasses);
      leafCount++;
      return l;
    }
    Node n = new Node();
    int chosen = r.nextInt(cand.size() + numNumerics);
    if (chosen < cand.size()) {
      n.att = cand.get(chosen);
      ArrayList<Integer> rest = new ArrayList<>(cand);
      rest.remove(Integer.valueOf(n.att));
      n.kids = new Node[numVals];
      for (int i = 0; i < numVals; i++) n.kids[i] = node(depth + 1, rest, mn, mx, r);
    } else {
      int k = chosen - cand.size();
      n.att = numNominals + k;
      n.value = (mx[k] - mn[k]) * r.nextDouble() + mn[k];
      n.kids = new Node[2];
      double[] nmx = mx.clone(); nmx[k] = n.value;
      n.kids[0] = node(depth + 1, cand, mn, nmx, r);
      double[] nmn = mn.clone(); nmn[k] = n.value;
      n.kids[1] = node(depth + 1, cand, nmn, mx, r);
    }
    return n;
  }

  static int classify(Node n, double[] x) {
    while (n.kids != null) n = n.att < numNominals ? n.kids[(int) x[n.att]] : n.kids[x[n.att] < n.value ? 0 : 1];
    return n.cls;
  }

  static void run(int treeSeed, int instSeed, int c, int o, int u, int v, int d, int l, double f, int count) {
    numClasses = c; numNominals = o; numNumerics = u; numVals = v; maxDepth = d; firstLeaf = l; leafFraction = f;
    nodeCount = 0; leafCount = 0;
    ArrayList<Integer> cand = new ArrayList<>();
    for (int i = 0; i < o; i++) cand.add(i);
    double[] mn = new double[u], mx = new double[u];
    for (int i = 0; i < u; i++) { mn[i] = 0.0; mx[i] = 1.0; }
    Node root = node(0, cand, mn, mx, new Random(treeSeed));
    System.out.printf("tree r=%d i=%d c=%d o=%d u=%d v=%d d=%d l=%d f=%s nodes=%d leaves=%d%n", treeSeed, instSeed, c, o, u, v, d, l, f, nodeCount, leafCount);
    Random ir = new Random(instSeed);
    int[] hist = new int[c];
    for (int k = 0; k < count; k++) {
      double[] x = new double[o + u];
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < o + u; i++) {
        x[i] = i < o ? ir.nextInt(v) : ir.nextDouble();
        sb.append(i < o ? String.valueOf((int) x[i]) : Double.toString(x[i])).append(", ");
      }
      int y = classify(root, x);
      hist[y]++;
      if (k < 5) System.out.println("  {" + sb + "} -> " + y);
    }
    StringBuilder h = new StringBuilder();
    for (int i = 0; i < c; i++) h.append(hist[i]).append(' ');
    System.out.println("  class counts of the first " + count + ": " + h);
  }

  public static void main(String[] a) {
    for (long s : new long[] {0, 1, 42, -7}) {
      Random r = new Random(s);
      System.out.printf("Random(%d): nextInt()=%d nextInt(10)=%d nextInt(16)=%d nextDouble()=%s nextLong()=%d%n", s, r.nextInt(),
          r.nextInt(10), r.nextInt(16), Double.toString(r.nextDouble()), r.nextLong());
    }
    run(1, 1, 2, 5, 5, 5, 5, 3, 0.15, 100000);
    run(7, 3, 3, 2, 3, 4, 4, 2, 0.3, 100000);
  }
}
