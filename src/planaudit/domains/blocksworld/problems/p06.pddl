;; Seven blocks, partial goal.  (on b d) already holds but must be
;; undone: d has to be lifted so that f (under d) can go on a, and
;; then b is put back on d.  g only has to end up clear.
;; Initial towers (top -> bottom): b d f | a g | c e
(define (problem blocksworld-p06)
  (:domain blocksworld)
  (:objects a b c d e f g - block)
  (:init
    (clear b)
    (on b d)
    (on d f)
    (ontable f)
    (clear a)
    (on a g)
    (ontable g)
    (clear c)
    (on c e)
    (ontable e)
    (handempty))
  (:goal (and
    (on f a)
    (on a c)
    (on e b)
    (on b d)
    (clear g))))
