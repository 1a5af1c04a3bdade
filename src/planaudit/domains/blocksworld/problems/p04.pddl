;; Two three-block towers exchange blocks: each goal tower mixes
;; blocks from both initial towers, and the goal bottoms b and d
;; must first reach the table (b is under a).  Each block needs
;; only one move, but only in a suitable order (e.g. d, a, b, e, f, c).
;; Initial towers (top -> bottom): a b c | d e f
(define (problem blocksworld-p04)
  (:domain blocksworld)
  (:objects a b c d e f - block)
  (:init
    (clear a)
    (on a b)
    (on b c)
    (ontable c)
    (clear d)
    (on d e)
    (on e f)
    (ontable f)
    (handempty))
  (:goal (and
    (on c f)
    (on f b)
    (ontable b)
    (on e a)
    (on a d)
    (ontable d))))
